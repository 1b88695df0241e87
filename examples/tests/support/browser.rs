//! A real browser for tests: Debian's headless Chromium driven over WebDriver (`chromedriver`)
//! with `fantoccini`, so a test sees a page as a person would (its scripts run, its `fetch`es
//! reach the server). Each helper polls for up to [`WAIT`] and panics naming what it waited
//! for and what the page showed, since a browser test's failure is otherwise a bare timeout.
//!
//! Needs `/usr/bin/chromium` and `/usr/bin/chromedriver` (`apt-get install chromium
//! chromium-driver`; `.ci/run` installs them), or other paths in `A2A_CHROMIUM` and
//! `A2A_CHROMEDRIVER`. Without them it panics: a missing browser fails the test, it never
//! skips it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// How long each helper waits for the page.
pub const WAIT: Duration = Duration::from_secs(15);

/// How much of the page's text a timeout's panic shows.
const PAGE_TEXT: usize = 2000;

const INSTALL: &str = "install chromium and chromium-driver: \
    apt-get update && apt-get install -y chromium chromium-driver \
    (or point A2A_CHROMIUM and A2A_CHROMEDRIVER at a Chromium and its driver)";

/// A headless Chromium session; its `chromedriver` is killed and its profile removed on drop.
pub struct Browser {
    client: Client,
    driver: Child,
    profile: PathBuf,
}

impl Browser {
    /// Start `chromedriver` on a free port and open a headless Chromium session with a fresh
    /// profile (no state shared between tests).
    pub async fn start() -> Browser {
        let chromium = path_from_env("A2A_CHROMIUM", "/usr/bin/chromium");
        let chromedriver = path_from_env("A2A_CHROMEDRIVER", "/usr/bin/chromedriver");
        for binary in [&chromium, &chromedriver] {
            // In CI and locally alike: a silent skip would hide an untested console.
            assert!(binary.exists(), "{} not found; {INSTALL}", binary.display());
        }

        // Bind-then-release: chromedriver takes the port a moment later.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // A group of its own, Chromium included: killed as one on drop (see `Drop`).
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}; {INSTALL}", chromedriver.display()));
        let until = Instant::now() + WAIT;
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            if let Ok(Some(status)) = driver.try_wait() {
                panic!("chromedriver exited at start-up ({status})");
            }
            assert!(
                Instant::now() < until,
                "chromedriver did not listen on {port}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        let profile = fresh_profile();
        let capabilities = json!({
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--window-size=1280,900",
                    format!("--user-data-dir={}", profile.display()),
                ],
            }
        });
        let Value::Object(capabilities) = capabilities else {
            unreachable!()
        };
        // Plain HTTP to the driver on loopback: no TLS stack to build.
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap_or_else(|e| panic!("a Chromium session ({}): {e}", chromium.display()));
        Browser {
            client,
            driver,
            profile,
        }
    }

    /// The WebDriver client, for what the helpers below do not cover.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Open `url` (returns once the page has loaded, not once its scripts have rendered).
    pub async fn goto(&self, url: &str) {
        self.client
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("open {url}: {e}"));
    }

    /// The first element matching the CSS selector `css`, once there is one.
    pub async fn wait_for(&self, css: &str) -> Element {
        self.poll(&format!("an element `{css}`"), || async move {
            self.client.find(Locator::Css(css)).await.ok()
        })
        .await
    }

    /// The first element matching `css` whose text contains `needle`, once there is one.
    pub async fn wait_for_text(&self, css: &str, needle: &str) -> Element {
        self.poll(
            &format!("an element `{css}` with text {needle:?}"),
            || async move {
                for element in self.client.find_all(Locator::Css(css)).await.ok()? {
                    // A re-rendered element is stale: the next round finds its successor.
                    if element.text().await.is_ok_and(|t| t.contains(needle)) {
                        return Some(element);
                    }
                }
                None
            },
        )
        .await
    }

    /// Click the element matching `css`, retried while it is not yet clickable.
    pub async fn click(&self, css: &str) {
        self.poll(&format!("a click on `{css}`"), || async move {
            let element = self.client.find(Locator::Css(css)).await.ok()?;
            element.click().await.ok()
        })
        .await
    }

    /// Replace the value of the input matching `css` with `text`, typed as keys.
    pub async fn fill(&self, css: &str, text: &str) {
        let element = self.wait_for(css).await;
        element
            .clear()
            .await
            .unwrap_or_else(|e| panic!("clear `{css}`: {e}"));
        element
            .send_keys(text)
            .await
            .unwrap_or_else(|e| panic!("type into `{css}`: {e}"));
    }

    /// The rendered text of the element matching `css` (as a person sees it: hidden parts
    /// excluded).
    pub async fn text(&self, css: &str) -> String {
        let element = self.wait_for(css).await;
        element
            .text()
            .await
            .unwrap_or_else(|e| panic!("text of `{css}`: {e}"))
    }

    /// Run `js` in the page as a function body; what it `return`s (JSON), `null` without one.
    pub async fn eval(&self, js: &str) -> Value {
        self.client
            .execute(js, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("run {js:?}: {e}"))
    }

    /// Save the viewport as `target/console-screenshots/NAME.png` (the workspace's target
    /// directory, `CARGO_TARGET_DIR` if set); its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self
            .client
            .screenshot()
            .await
            .unwrap_or_else(|e| panic!("screenshot {name}: {e}"));
        let dir = target_dir().join("console-screenshots");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path
    }

    /// End the session: Chromium quits cleanly (dropping the browser kills it instead).
    pub async fn close(self) {
        self.client
            .clone()
            .close()
            .await
            .unwrap_or_else(|e| panic!("close the session: {e}"));
    }

    /// Retry `attempt` until it gives something or [`WAIT`] has passed; then panic naming
    /// `what` with the page's visible text.
    // A closure returning a future rather than an async closure: the latter's future is not
    // `Send` for every lifetime, and a test may `tokio::spawn` a browser's work.
    async fn poll<T, F: Future<Output = Option<T>>>(
        &self,
        what: &str,
        mut attempt: impl FnMut() -> F,
    ) -> T {
        let until = Instant::now() + WAIT;
        loop {
            if let Some(found) = attempt().await {
                return found;
            }
            if Instant::now() >= until {
                let url = self.client.current_url().await.map(|u| u.to_string());
                let page = self
                    .client
                    .execute(
                        "return document.body ? document.body.innerText : ''",
                        vec![],
                    )
                    .await
                    .map(|v| v.as_str().unwrap_or_default().to_string())
                    .unwrap_or_else(|e| format!("(unreadable: {e})"));
                let shown: String = page.chars().take(PAGE_TEXT).collect();
                let cut = if page.chars().count() > PAGE_TEXT {
                    " […]"
                } else {
                    ""
                };
                panic!(
                    "waited {WAIT:?} for {what} on {}, in vain; the page shows:\n{shown}{cut}",
                    url.unwrap_or_default()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Also after a failed test, which never reaches `close`. Chromium outlives a killed
        // chromedriver (nothing ties it to the driver), hence the driver's whole process group.
        if let Some(pid) = self.driver.id() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
        }
        let _ = self.driver.start_kill();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn path_from_env(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var).map_or_else(|| default.into(), PathBuf::from)
}

/// A new, empty `--user-data-dir` under the system's temporary directory.
fn fresh_profile() -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("a2a-chromium-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// `CARGO_TARGET_DIR` (relative to the workspace if relative), else `<workspace>/target`.
fn target_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace.join(dir),
        None => workspace.join("target"),
    }
}
