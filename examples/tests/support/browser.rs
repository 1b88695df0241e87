//! A real browser for tests: Debian's headless Chromium (over `chromedriver`) or Firefox ESR
//! (over `geckodriver`), driven over WebDriver with `fantoccini`, so a test sees a page as a
//! person would (its scripts run, its `fetch`es reach the server). Each helper polls for up to
//! [`WAIT`] and panics naming what it waited for and what the page showed, since a browser
//! test's failure is otherwise a bare timeout.
//!
//! Chromium ([`Browser::start`]) needs `/usr/bin/chromium` and `/usr/bin/chromedriver`
//! (`apt-get install chromium chromium-driver`), or other paths in `A2A_CHROMIUM` and
//! `A2A_CHROMEDRIVER`. Firefox ([`Browser::firefox`]) needs `/usr/bin/firefox-esr`
//! (`apt-get install firefox-esr`, or another in `A2A_FIREFOX`) and `geckodriver` (`cargo
//! install geckodriver --locked`: Debian packages none), from `A2A_GECKODRIVER`, else `PATH`,
//! else `$CARGO_HOME/bin` or `~/.cargo/bin`. `.ci/run` installs all of them. Without them it
//! panics: a missing browser fails the test, it never skips it.

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

const INSTALL_CHROMIUM: &str = "install chromium and chromium-driver: \
    apt-get update && apt-get install -y chromium chromium-driver \
    (or point A2A_CHROMIUM and A2A_CHROMEDRIVER at a Chromium and its driver)";

const INSTALL_FIREFOX: &str = "install Firefox ESR and geckodriver: \
    apt-get update && apt-get install -y firefox-esr, and \
    cargo install geckodriver --locked \
    (or point A2A_FIREFOX and A2A_GECKODRIVER at a Firefox and its driver)";

/// Which browser a [`Browser`] drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Headless Chromium through `chromedriver`.
    Chromium,
    /// Headless Firefox (ESR) through `geckodriver`.
    Firefox,
}

impl Engine {
    /// Its name, lower case (`chromium`, `firefox`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Chromium => "chromium",
            Engine::Firefox => "firefox",
        }
    }
}

/// A headless browser session; its driver (the browser with it) is killed and its profile
/// removed on drop.
pub struct Browser {
    client: Client,
    driver: Child,
    profile: PathBuf,
    engine: Engine,
}

impl Browser {
    /// Start `chromedriver` on a free port and open a headless Chromium session with a fresh
    /// profile (no state shared between tests).
    pub async fn start() -> Browser {
        Browser::start_with(Engine::Chromium).await
    }

    /// Start `geckodriver` on a free port and open a headless Firefox session with a fresh
    /// profile.
    pub async fn firefox() -> Browser {
        Browser::start_with(Engine::Firefox).await
    }

    /// Start `engine`'s driver on a free port and open a headless session with a fresh profile
    /// (no state shared between tests).
    pub async fn start_with(engine: Engine) -> Browser {
        let (browser, driver_path, install) = match engine {
            Engine::Chromium => (
                path_from_env("A2A_CHROMIUM", "/usr/bin/chromium"),
                path_from_env("A2A_CHROMEDRIVER", "/usr/bin/chromedriver"),
                INSTALL_CHROMIUM,
            ),
            Engine::Firefox => (
                path_from_env("A2A_FIREFOX", "/usr/bin/firefox-esr"),
                geckodriver(),
                INSTALL_FIREFOX,
            ),
        };
        for binary in [&browser, &driver_path] {
            // In CI and locally alike: a silent skip would hide an untested console.
            assert!(binary.exists(), "{} not found; {install}", binary.display());
        }
        let driver_name = driver_path.file_name().map_or_else(
            || driver_path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );

        // Bind-then-release: the driver takes the port a moment later.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut command = Command::new(&driver_path);
        match engine {
            Engine::Chromium => command.arg(format!("--port={port}")),
            // Its own Marionette port is system-assigned; no BiDi WebSocket is asked for.
            Engine::Firefox => command.args(["--port", &port.to_string()]),
        };
        let mut driver = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // A group of its own, the browser included: killed as one on drop (see `Drop`).
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}; {install}", driver_path.display()));
        let until = Instant::now() + WAIT;
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            if let Ok(Some(status)) = driver.try_wait() {
                panic!("{driver_name} exited at start-up ({status})");
            }
            assert!(
                Instant::now() < until,
                "{driver_name} did not listen on {port}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        let profile = fresh_profile(engine);
        let capabilities = match engine {
            Engine::Chromium => json!({
                "goog:chromeOptions": {
                    "binary": browser,
                    "args": [
                        "--headless=new",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--disable-dev-shm-usage",
                        "--window-size=1280,900",
                        format!("--user-data-dir={}", profile.display()),
                    ],
                }
            }),
            // `-profile`: a directory of ours, removed on drop even when geckodriver is killed
            // (its own temporary profile would stay behind).
            Engine::Firefox => json!({
                "moz:firefoxOptions": {
                    "binary": browser,
                    "args": [
                        "-headless",
                        "-width=1280",
                        "-height=900",
                        "-profile",
                        profile,
                    ],
                    "prefs": {},
                }
            }),
        };
        let Value::Object(capabilities) = capabilities else {
            unreachable!()
        };
        // Plain HTTP to the driver on loopback: no TLS stack to build.
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap_or_else(|e| panic!("a {} session ({}): {e}", engine.name(), browser.display()));
        Browser {
            client,
            driver,
            profile,
            engine,
        }
    }

    /// Which browser this is.
    pub fn engine(&self) -> Engine {
        self.engine
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

    /// The rendered text of the last element matching `css` (the newest of several, such as
    /// chat turns); empty when there is none.
    pub async fn last_text(&self, css: &str) -> String {
        let js = format!(
            "const all = document.querySelectorAll({}); return all.length ? all[all.length - 1].innerText : null;",
            json!(css)
        );
        self.eval(&js)
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Wait (up to 20 s) until the last element matching `css` contains `needle`; its text.
    pub async fn wait_last(&self, css: &str, needle: &str) -> String {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let text = self.last_text(css).await;
            if text.contains(needle) {
                return text;
            }
            if Instant::now() > until {
                let page = self.eval("return document.body.innerText").await;
                panic!(
                    "the last `{css}` never said {needle:?}: it says {text:?}; the page: {page}"
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
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

    /// End the session: the browser quits cleanly (dropping the browser kills it instead).
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
        // Also after a failed test, which never reaches `close`. The browser outlives a killed
        // driver (nothing ties Chromium to chromedriver, nor Firefox to geckodriver), hence the
        // driver's whole process group. (Firefox's `crashhelper` leaves the group, but exits
        // with Firefox.)
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

/// `geckodriver`: `A2A_GECKODRIVER`, else the first on `PATH`, else in `$CARGO_HOME/bin` or
/// `~/.cargo/bin` (where `cargo install` puts it); else the name, which then is not found.
fn geckodriver() -> PathBuf {
    if let Some(path) = std::env::var_os("A2A_GECKODRIVER") {
        return path.into();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let cargo_homes = [
        std::env::var_os("CARGO_HOME").map(PathBuf::from),
        std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")),
    ];
    std::env::split_paths(&path)
        .chain(
            cargo_homes
                .into_iter()
                .flatten()
                .map(|home| home.join("bin")),
        )
        .map(|dir| dir.join("geckodriver"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| "geckodriver".into())
}

/// A new, empty profile directory under the system's temporary directory.
fn fresh_profile(engine: Engine) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("a2a-{}-{}-{n}", engine.name(), std::process::id()));
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
