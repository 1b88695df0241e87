//! Example binaries as real processes in tests: started with plain logs and `RUST_LOG` (and
//! any model's settings) unset, their stderr read line by line, the URL they log at start-up, killed when dropped.

#![allow(dead_code)]

pub mod a11y;
pub mod browser;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// A running example.
pub struct Example {
    child: Child,
    lines: Receiver<String>,
    /// `http://ADDR` from its "listening on" line.
    pub url: String,
    /// The lines it logged before that one.
    pub before: Vec<String>,
}

impl Example {
    /// Start `bin` with `args` and wait (up to a minute) for the URL it logs.
    pub fn start(bin: &str, args: &[&str]) -> Example {
        Self::start_with(bin, args, &[])
    }

    /// [`start`](Self::start) with these environment variables set.
    pub fn start_with(bin: &str, args: &[&str], env: &[(&str, &str)]) -> Example {
        let mut child = Command::new(bin)
            .args(args)
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .env_remove("A2A_STORE")
            .env_remove("A2A_JWT_SECRET")
            // No model unless a test gives one (the model-driven examples read these).
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_API_KEY")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {bin}: {e}"));
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let until = Instant::now() + Duration::from_secs(60);
        let mut before = Vec::new();
        let url = loop {
            let left = until.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.split("listening on ").nth(1) {
                        break rest
                            .split_whitespace()
                            .next()
                            .unwrap_or_default()
                            .to_string();
                    }
                    before.push(line);
                }
                Err(_) => panic!("{bin} did not log its URL"),
            }
        };
        Example {
            child,
            lines,
            url,
            before,
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a port in the URL")
    }

    /// Send SIGTERM.
    pub fn terminate(&self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -TERM");
    }

    /// Wait for it to exit; its status and the stderr lines it wrote after starting.
    pub fn wait(mut self) -> (ExitStatus, Vec<String>) {
        let status = self.child.wait().expect("wait");
        let rest = self.lines.try_iter().collect();
        (status, rest)
    }
}

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh database on the test server; its URL, and a guard that drops it.
pub struct Database {
    admin: sqlx::PgPool,
    name: String,
    /// `postgres://.../NAME`
    pub url: String,
}

impl Database {
    pub async fn fresh(tag: &str) -> Database {
        let admin_url = a2a_tests::postgres_url();
        let admin = sqlx::PgPool::connect(&admin_url)
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL at {admin_url}: {e}"));
        let name = format!("a2a_{tag}_{}", std::process::id());
        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .execute(&admin)
            .await
            .unwrap();
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&admin)
            .await
            .unwrap();
        let (server, _) = admin_url.rsplit_once('/').expect("a database in the URL");
        let url = format!("{server}/{name}");
        Database { admin, name, url }
    }

    /// Drop the database.
    pub async fn drop(self) {
        let _ = sqlx::query(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ))
        .execute(&self.admin)
        .await;
    }
}
