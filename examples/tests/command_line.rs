//! Issue #30's first-hour papercuts, through the example binaries as a user runs them: each
//! `--help` says what that example is, the delegation pair's default ports agree with each
//! other and with README's commands, a store that cannot be opened gets the hint for that
//! store, and logs written to a pipe carry no colour codes.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::Example;

const HELLO: &str = env!("CARGO_BIN_EXE_hello");

/// The example binaries: one per file of examples/src/bin, built beside `hello`.
fn binaries() -> Vec<(String, PathBuf)> {
    let dir = Path::new(HELLO).parent().expect("the binaries' directory");
    let sources = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join("bin");
    let mut bins: Vec<(String, PathBuf)> = std::fs::read_dir(&sources)
        .expect("examples/src/bin")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let exe = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
            (name, exe)
        })
        .collect();
    bins.sort();
    bins
}

/// Run `bin` with `args`, no colours asked for or against, no store or model from the
/// environment.
fn run(bin: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .env_remove("A2A_STORE")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", bin.display()))
}

/// What each example's `--help` opens with: what that example is, in its own words.
const ABOUT: &[(&str, &str)] = &[
    (
        "conformance",
        "The conformance example: the agent the A2A TCK runs against",
    ),
    ("hello", "The hello example: the smallest A2A agent"),
    (
        "llm_agent",
        "A model-driven agent: routing, narration and a streamed answer",
    ),
    (
        "llm_orchestrator",
        "A model agent that uses other A2A agents as its tools",
    ),
    (
        "orchestrator",
        "Sends work to a remote A2A agent without waiting and follows it by webhook",
    ),
    ("planner", "The planner of the delegation example"),
    (
        "push_worker",
        "A slow agent that reports completion by push notification",
    ),
    (
        "streaming",
        "The streaming example: an A2A agent that counts to N",
    ),
    (
        "travel",
        "The travel example: an A2A agent with typed data skills",
    ),
    (
        "workshop",
        "The workshop example: an A2A agent that asks a question",
    ),
    ("worker", "The worker of the delegation example"),
];

#[test]
fn every_example_says_what_it_is_in_its_help() {
    let bins = binaries();
    let names: Vec<&str> = bins.iter().map(|(n, _)| n.as_str()).collect();
    let mut described: Vec<&str> = ABOUT.iter().map(|(n, _)| *n).collect();
    described.sort();
    assert_eq!(
        names, described,
        "every example binary has its expected --help line here"
    );
    let mut firsts = Vec::new();
    for (name, exe) in &bins {
        let out = run(exe, &["--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{name} --help: {out:?}");
        let first = help.lines().next().unwrap_or_default();
        let want = ABOUT.iter().find(|(n, _)| n == name).unwrap().1;
        assert!(
            first.starts_with(want),
            "{name} --help opens with {first:?}, not with what it is ({want:?})"
        );
        assert!(!first.contains("every example shares"), "{name}: {first}");
        // What an operator turns on (#33), and the console (#34).
        for flag in ["--metrics", "--otel", "--console"] {
            assert!(help.contains(flag), "{name} --help has no {flag}");
        }
        firsts.push(first.to_string());
    }
    let mut distinct = firsts.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), firsts.len(), "{firsts:#?}");
}

/// The URL of an example's card as `--print-card` shows it (the bind address).
fn printed_card_url(bin: &Path, args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.push("--print-card");
    let out = run(bin, &args);
    assert!(
        out.status.success(),
        "{} {args:?}: {}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let card: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{} {args:?} printed no card: {e}", bin.display()));
    card["supportedInterfaces"][0]["url"]
        .as_str()
        .expect("an interface URL")
        .to_string()
}

/// `default: VALUE` of `flag` in `bin --help`.
fn help_default(bin: &Path, flag: &str) -> String {
    let help = String::from_utf8_lossy(&run(bin, &["--help"]).stdout).into_owned();
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with(flag))
        .unwrap_or_else(|| panic!("{flag} in {}'s help:\n{help}", bin.display()));
    line.split("[default: ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_else(|| panic!("a default in {line:?}"))
        .to_string()
}

#[test]
fn the_planner_looks_for_the_worker_where_the_worker_listens() {
    let worker = Path::new(env!("CARGO_BIN_EXE_worker"));
    let planner = Path::new(env!("CARGO_BIN_EXE_planner"));
    let worker_url = printed_card_url(worker, &[]);
    let planner_url = printed_card_url(planner, &[]);
    assert_eq!(worker_url, "http://127.0.0.1:3001");
    assert_eq!(planner_url, "http://127.0.0.1:3000");
    assert_eq!(help_default(planner, "--worker"), worker_url);
}

/// The `cargo run --bin NAME [-- ARGS]` commands of README.md, each with the comment after
/// it (`# ...`), skipping those with placeholders (`...`).
fn readme_commands() -> Vec<(String, Vec<String>, String)> {
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .join("README.md"),
    )
    .expect("README.md");
    readme
        .lines()
        .filter_map(|line| {
            let (command, comment) = line.split_once(" #").unwrap_or((line, ""));
            let rest = command.trim().strip_prefix("cargo run --bin ")?;
            if command.contains("...") {
                return None;
            }
            let mut words = shell_words(rest).into_iter();
            let name = words.next()?;
            // A trailing `&` runs it in the background: the shell's, not an argument.
            let args: Vec<String> = words
                .skip_while(|w| w == "--")
                .filter(|w| w != "&")
                .collect();
            Some((name, args, comment.trim().to_string()))
        })
        .collect()
}

/// A command line's words as a shell splits them: on blanks, except inside quotes.
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        words.push(word);
    }
    words
}

/// README's example commands run as written (with `--print-card`, so nothing is bound or
/// opened): every option exists, and where the comment names a port, the example listens
/// there.
#[test]
fn the_readme_commands_start_the_examples_where_it_says() {
    let commands = readme_commands();
    let names: Vec<&str> = commands.iter().map(|(n, ..)| n.as_str()).collect();
    for name in ["hello", "worker", "planner", "workshop"] {
        assert!(names.contains(&name), "README runs `{name}`: {names:?}");
    }
    let bins = binaries();
    for (name, args, comment) in &commands {
        let exe = &bins
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("README runs `{name}`, which is not an example"))
            .1;
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        if name == "orchestrator" {
            orchestrator_takes(exe, &args);
            continue;
        }
        let url = printed_card_url(exe, &args);
        // The first `:PORT` the comment names is where this command listens.
        let port = comment.split(':').skip(1).find_map(|s| {
            let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
            (digits.len() >= 4).then_some(digits)
        });
        if let Some(port) = port {
            assert!(
                url.ends_with(&format!(":{port}")),
                "README says `{name} {args:?}` listens on :{port} ({comment}); its card: {url}"
            );
        }
    }
}

/// The orchestrator is no agent (it has no card to print): its README arguments are taken,
/// and it gets as far as calling the agent (none here), in a directory of its own.
fn orchestrator_takes(exe: &Path, args: &[&str]) {
    let dir = std::env::temp_dir().join(format!("a2a-readme-orch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(exe)
        .current_dir(&dir)
        .args(args)
        .args(["--bind", "127.0.0.1:0", "--agent", "http://127.0.0.1:1"])
        .env("NO_COLOR", "1")
        .output()
        .expect("run orchestrator");
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "no agent there: {stderr}");
    assert!(
        stderr.contains("cannot reach http://127.0.0.1:1"),
        "orchestrator {args:?} stopped before calling the agent: {stderr}"
    );
}

#[test]
fn a_sqlite_file_another_process_holds_gets_the_sqlite_hint() {
    let dir = std::env::temp_dir().join(format!("a2a-examples-hint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("tasks.db");
    let store = format!("sqlite:{}", db.display());
    let first = Example::start(HELLO, &["--bind", "127.0.0.1:0", "--store", &store]);
    let out = run(
        Path::new(HELLO),
        &["--bind", "127.0.0.1:0", "--store", &store],
    );
    drop(first);
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("in use by another process"), "{stderr}");
    let hint = stderr
        .lines()
        .find(|l| l.starts_with("hint: "))
        .unwrap_or_else(|| panic!("a hint: {stderr}"));
    assert!(
        hint.contains("SQLite") && hint.contains("--store sqlite:"),
        "the SQLite hint: {hint}"
    );
    assert!(
        !hint.contains("is PostgreSQL running"),
        "no PostgreSQL connection hint for a SQLite file: {hint}"
    );
}

#[test]
fn a_missing_postgres_database_gets_a_hint_to_create_it() {
    let server = a2a_tests::postgres_url();
    // The test server's URL with a database it does not have.
    let (base, _) = server.split_once('?').unwrap_or((&server, ""));
    let (base, _) = base.rsplit_once('/').expect("a database in the URL");
    let db = format!("a2a_kit_no_such_db_{}", std::process::id());
    let url = format!("{base}/{db}");
    let out = run(
        Path::new(HELLO),
        &["--bind", "127.0.0.1:0", "--store", &url],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("no database `{db}`")),
        "the error names the missing database: {stderr}"
    );
    let hint = stderr
        .lines()
        .find(|l| l.starts_with("hint: "))
        .unwrap_or_else(|| panic!("a hint: {stderr}"));
    let host = base
        .rsplit_once('@')
        .map_or(base, |(_, h)| h)
        .rsplit_once(':')
        .map_or("", |(h, _)| h);
    assert!(
        hint.contains("createdb")
            && hint.contains(&format!("-h {host}"))
            && hint.contains(&format!("{db}`"))
            && hint.contains(&format!("CREATE DATABASE \"{db}\"")),
        "the hint says how to create it: {hint}"
    );
    assert!(!hint.contains("is PostgreSQL running"), "{hint}");
    assert!(
        !stderr.contains(":postgres@"),
        "no password in the output: {stderr}"
    );
}

/// Logs written to a pipe are plain text: no ANSI colour codes, with or without `NO_COLOR`.
#[test]
fn logs_in_a_pipe_have_no_colour_codes() {
    let mut cmd = Command::new(HELLO);
    cmd.args(["--bind", "127.0.0.1:0"])
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let lines = stderr_until_listening(cmd);
    assert!(
        lines.iter().any(|l| l.contains("listening on")),
        "{lines:?}"
    );
    for line in &lines {
        assert!(!line.contains("\x1b["), "a colour code in a pipe: {line:?}");
    }
    // An error a user gets is plain text too.
    let out = run(
        Path::new(HELLO),
        &["--store", "sqlite:/nonexistent-directory/tasks.db"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("hint:"),
        "{stderr}"
    );
    assert!(!stderr.contains("\x1b["), "{stderr:?}");
}

/// Start `cmd` (stderr piped) and return what it wrote to stderr up to its "listening on"
/// line (at most 60 s), then stop it.
fn stderr_until_listening(mut cmd: Command) -> Vec<String> {
    use std::io::{BufRead, BufReader};
    let mut child = cmd.spawn().expect("start the example");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut lines = Vec::new();
    while let Ok(line) = rx.recv_timeout(until.saturating_duration_since(std::time::Instant::now()))
    {
        let done = line.contains("listening on");
        lines.push(line);
        if done {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    lines
}
