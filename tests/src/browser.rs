//! A real headless Chromium for the web app's tests, driven over WebDriver (fantoccini):
//! `chromedriver` (Debian's `chromium-driver`) is started on a free loopback port with a fresh
//! user-data directory and stopped on drop. Calls are blocking (each runs on the browser's own
//! tokio runtime), like the rest of the harness. Every screen a test passes through is saved
//! as a PNG with [`Browser::screenshot`] into `tests/screenshots/<test>/` (see the README).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::actions::{
    Actions, InputSource, KeyAction, KeyActions, MOUSE_BUTTON_LEFT, MouseActions, PointerAction,
};
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::paths;

/// How long an element may take to appear before a test fails.
pub const UI_TIMEOUT: Duration = Duration::from_secs(30);

/// The Chromium flags of the issue: headless, no sandbox (containers), nothing phoning home.
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,1000",
    "--autoplay-policy=no-user-gesture-required",
];

pub struct Browser {
    runtime: tokio::runtime::Runtime,
    client: Option<Client>,
    driver: Child,
    _profile: TempDir,
    downloads: TempDir,
    shots: PathBuf,
    shot_count: u32,
}

fn binary(env: &str, candidates: &[&str]) -> String {
    if let Ok(path) = std::env::var(env) {
        return path;
    }
    for c in candidates {
        if Path::new(c).exists() {
            return (*c).to_owned();
        }
    }
    panic!(
        "none of {candidates:?} exists: install Debian's chromium and chromium-driver (bash ops/setup.sh), or set {env}"
    );
}

impl Browser {
    /// Starts chromedriver and a headless Chromium; screenshots go to `tests/screenshots/<test>/`.
    pub fn start(test: &str) -> Browser {
        Browser::start_with_flags(test, &[])
    }

    /// [`Browser::start`] with more Chromium flags (e.g. a fake microphone playing a file).
    pub fn start_with_flags(test: &str, flags: &[String]) -> Browser {
        let chromium = binary("SCRIBE_CHROMIUM", &["/usr/bin/chromium", "/usr/bin/chromium-browser"]);
        let chromedriver = binary("SCRIBE_CHROMEDRIVER", &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]);
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting chromedriver");
        let profile = tempfile::Builder::new().prefix("scribe-chromium-").tempdir().expect("a profile dir");
        let downloads = tempfile::Builder::new().prefix("scribe-downloads-").tempdir().expect("a download dir");
        let shots = paths::repo().join("tests").join("screenshots").join(test);
        let _ = std::fs::remove_dir_all(&shots);
        std::fs::create_dir_all(&shots).expect("the screenshot dir");
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|s| (*s).to_owned()).collect();
        args.extend_from_slice(flags);
        args.push(format!("--user-data-dir={}", profile.path().display()));
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": chromium,
                "args": args,
                "prefs": {
                    "download.default_directory": downloads.path(),
                    "download.prompt_for_download": false,
                },
            }),
        );
        // The page's console, for Browser::console_log.
        caps.insert("goog:loggingPrefs".into(), json!({"browser": "ALL"}));
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        let client = loop {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match runtime.block_on(ClientBuilder::new(connector).capabilities(caps.clone()).connect(&url)) {
                Ok(client) => break client,
                Err(e) => {
                    assert!(Instant::now() < deadline, "chromedriver on {url} did not start a session: {e}");
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        };
        let browser =
            Browser { runtime, client: Some(client), driver, _profile: profile, downloads, shots, shot_count: 0 };
        // Let Chromium save downloads without asking (headless needs the CDP command).
        let dir = browser.downloads.path().display().to_string();
        let _ = browser.cdp("Browser.setDownloadBehavior", json!({"behavior": "allow", "downloadPath": dir}));
        browser
    }

    fn client(&self) -> &Client {
        self.client.as_ref().expect("the session is open")
    }

    /// Sends a Chrome DevTools command through chromedriver.
    fn cdp(&self, cmd: &str, params: Value) -> Result<Value, String> {
        let client = self.client().clone();
        let cmd = cmd.to_owned();
        self.runtime
            .block_on(async move { client.issue_cmd(ChromeCdp { cmd, params }).await })
            .map_err(|e| e.to_string())
    }

    pub fn goto(&self, url: &str) {
        let client = self.client().clone();
        let url = url.to_owned();
        self.runtime.block_on(async move { client.goto(&url).await }).expect("navigating");
    }

    pub fn refresh(&self) {
        let client = self.client().clone();
        self.runtime.block_on(async move { client.refresh().await }).expect("reloading");
    }

    /// The first element matching `css`, waiting up to [`UI_TIMEOUT`].
    pub fn find(&self, css: &str) -> Element {
        let client = self.client().clone();
        let selector = css.to_owned();
        self.runtime
            .block_on(async move { client.wait().at_most(UI_TIMEOUT).for_element(Locator::Css(&selector)).await })
            .unwrap_or_else(|e| panic!("no element {css} within {UI_TIMEOUT:?}: {e}\n{}", self.page_text()))
    }

    /// Every element matching `css` now.
    pub fn find_all(&self, css: &str) -> Vec<Element> {
        let client = self.client().clone();
        let css = css.to_owned();
        self.runtime.block_on(async move { client.find_all(Locator::Css(&css)).await }).expect("finding elements")
    }

    pub fn click(&self, css: &str) {
        let e = self.find(css);
        self.runtime.block_on(e.click()).unwrap_or_else(|err| panic!("clicking {css}: {err}"));
    }

    pub fn click_element(&self, e: &Element) {
        self.runtime.block_on(e.click()).expect("clicking");
    }

    /// Types `keys` into the element (WebDriver key codes such as `\u{E009}` for Control work).
    pub fn type_into(&self, css: &str, keys: &str) {
        let e = self.find(css);
        self.send_keys(&e, keys);
    }

    pub fn send_keys(&self, e: &Element, keys: &str) {
        self.runtime.block_on(e.send_keys(keys)).expect("typing");
    }

    /// Resizes the window (CSS pixels): 640 x 500 shows a 1280 x 1000 screen at 200 % zoom.
    pub fn set_window_size(&self, width: u32, height: u32) {
        let client = self.client().clone();
        self.runtime.block_on(async move { client.set_window_size(width, height).await }).expect("resizing the window");
    }

    /// Shows the page as at `percent` % browser zoom on the current window: the CSS viewport
    /// shrinks by the factor and every CSS pixel takes `percent / 100` screen pixels, so a
    /// screenshot shows what a person at that zoom sees. `100` restores the normal view.
    pub fn zoom(&self, percent: u32, window_width: u32, window_height: u32) {
        let result = if percent == 100 {
            self.cdp("Emulation.clearDeviceMetricsOverride", json!({}))
        } else {
            let factor = f64::from(percent) / 100.0;
            self.cdp(
                "Emulation.setDeviceMetricsOverride",
                json!({
                    "width": (f64::from(window_width) / factor).round() as u32,
                    "height": (f64::from(window_height) / factor).round() as u32,
                    "deviceScaleFactor": factor,
                    "mobile": false,
                }),
            )
        };
        result.unwrap_or_else(|e| panic!("zooming to {percent} %: {e}"));
    }

    /// Shows the page as a phone of `width` x `height` CSS pixels would (a mobile viewport at
    /// scale 1, so screenshots have the phone's size); [`Browser::zoom`] with `100` restores the
    /// window's own view.
    pub fn phone(&self, width: u32, height: u32) {
        self.cdp(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": true}),
        )
        .unwrap_or_else(|e| panic!("emulating a {width} x {height} phone: {e}"));
    }

    /// Runs axe-core (vendored in `tests/vendor/`, test-only) on the current page and returns
    /// its violations: `{id, impact, help, nodes: [{target, html, failureSummary}]}` each.
    pub fn axe(&self) -> Vec<Value> {
        let source = std::fs::read_to_string(paths::repo().join("tests/vendor").join(AXE_FILE))
            .unwrap_or_else(|e| panic!("reading tests/vendor/{AXE_FILE}: {e}"));
        let loaded = self.script(&format!("{source}\n;return typeof window.axe;"), vec![]);
        assert_eq!(loaded, json!("object"), "axe-core did not load into the page");
        let client = self.client().clone();
        let run = "const done = arguments[arguments.length - 1];
            axe.run(document, { resultTypes: ['violations'] }).then(
              (r) => done(r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map((n) => ({ target: n.target, html: n.html.slice(0, 300), failureSummary: n.failureSummary })) }))),
              (e) => done({ error: String(e) }));";
        let found =
            self.runtime.block_on(async move { client.execute_async(run, vec![]).await }).expect("running axe-core");
        match found {
            Value::Array(violations) => violations,
            other => panic!("axe-core failed: {other}"),
        }
    }

    /// The page's console messages since the last call (`{level, message}` each, as chromedriver
    /// logs them: `console.*` calls and the browser's own errors such as failed requests).
    pub fn console_log(&self) -> Vec<Value> {
        let client = self.client().clone();
        let log = self
            .runtime
            .block_on(async move { client.issue_cmd(BrowserLog).await })
            .expect("reading the browser's console log");
        log.as_array().cloned().unwrap_or_default()
    }

    /// Limits the browser's upload speed (bytes per second), so a test can watch a progress
    /// bar move; `None` lifts the limit.
    pub fn throttle_uploads(&self, bytes_per_second: Option<u32>) {
        self.cdp("Network.enable", json!({})).expect("enabling the network domain");
        let upload = bytes_per_second.map_or(-1.0, f64::from);
        self.cdp(
            "Network.emulateNetworkConditions",
            json!({"offline": false, "latency": 0, "downloadThroughput": -1.0, "uploadThroughput": upload}),
        )
        .expect("throttling uploads");
    }

    /// Drops a file on the element matching `css` the way a drag from the desktop does: a
    /// `DataTransfer` holding a `File` with the bytes of `path`, in `dragenter`, `dragover` and
    /// `drop` events. (WebDriver cannot drag from outside the page.)
    pub fn drop_file(&self, css: &str, path: &Path, mime: &str) {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let name = path.file_name().expect("a file name").to_string_lossy().into_owned();
        let dropped = self.script(
            "const [css, bytes, name, type] = arguments;
             const target = document.querySelector(css);
             if (!target) return false;
             const data = new DataTransfer();
             data.items.add(new File([new Uint8Array(bytes)], name, { type }));
             for (const kind of ['dragenter', 'dragover', 'drop']) {
               target.dispatchEvent(new DragEvent(kind, { bubbles: true, cancelable: true, dataTransfer: data }));
             }
             return true;",
            vec![json!(css), json!(bytes), json!(name), json!(mime)],
        );
        assert_eq!(dropped, json!(true), "no element {css} to drop {name} on");
    }

    /// Presses `keys` together as one chord (WebDriver key codes, e.g. `\u{E009}` for Control),
    /// sent to whatever has the focus.
    pub fn press(&self, keys: &str) {
        let client = self.client().clone();
        let mut actions = KeyActions::new("keyboard".to_owned());
        for c in keys.chars() {
            actions = actions.then(KeyAction::Down { value: c });
        }
        for c in keys.chars().rev() {
            actions = actions.then(KeyAction::Up { value: c });
        }
        self.runtime.block_on(async move { client.perform_actions(actions).await }).expect("pressing keys");
    }

    /// Clicks the element matching `css` with Shift held down, as a person extending a choice.
    pub fn shift_click(&self, css: &str) {
        const SHIFT: char = '\u{E008}';
        let element = self.find(css);
        let client = self.client().clone();
        let pause = Duration::from_millis(0);
        let keys = KeyActions::new("keyboard".to_owned())
            .then(KeyAction::Down { value: SHIFT })
            .pause(pause)
            .pause(pause)
            .pause(pause)
            .then(KeyAction::Up { value: SHIFT });
        let mouse = MouseActions::new("mouse".to_owned())
            .pause(pause)
            .then(PointerAction::MoveToElement { element, duration: None, x: 0.0, y: 0.0 })
            .then(PointerAction::Down { button: MOUSE_BUTTON_LEFT })
            .then(PointerAction::Up { button: MOUSE_BUTTON_LEFT })
            .pause(pause);
        let chord = Actions::from(keys).and(mouse);
        self.runtime
            .block_on(async move { client.perform_actions(chord).await })
            .unwrap_or_else(|e| panic!("shift-clicking {css}: {e}"));
    }

    /// Drags with the mouse from one point of the viewport (CSS pixels) to another: press,
    /// move there in a few steps, release, as a person dragging an edge.
    pub fn drag(&self, from: (f64, f64), to: (f64, f64)) {
        let client = self.client().clone();
        let step = Duration::from_millis(50);
        let mut mouse = MouseActions::new("mouse".to_owned())
            .then(PointerAction::MoveTo { duration: None, x: from.0.round(), y: from.1.round() })
            .then(PointerAction::Down { button: MOUSE_BUTTON_LEFT });
        for k in 1..=5 {
            let f = f64::from(k) / 5.0;
            let (x, y) = (from.0 + (to.0 - from.0) * f, from.1 + (to.1 - from.1) * f);
            mouse = mouse.then(PointerAction::MoveTo { duration: Some(step), x: x.round(), y: y.round() });
        }
        let mouse = mouse.then(PointerAction::Up { button: MOUSE_BUTTON_LEFT });
        self.runtime
            .block_on(async move { client.perform_actions(mouse).await })
            .unwrap_or_else(|e| panic!("dragging from {from:?} to {to:?}: {e}"));
    }

    /// Lets the page read and write the clipboard (as a person allowing it), so a test can put
    /// HTML there and paste it with Ctrl+V.
    pub fn allow_clipboard(&self) {
        self.cdp("Browser.grantPermissions", json!({"permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]}))
            .expect("granting the clipboard");
    }

    /// Empties an input.
    pub fn clear(&self, e: &Element) {
        self.runtime.block_on(e.clear()).expect("clearing");
    }

    /// Waits until the element matching `css` has attribute `name` equal to `value`.
    pub fn wait_for_attr(&self, css: &str, name: &str, value: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let now = self.script(
                "const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;",
                vec![json!(css), json!(name)],
            );
            let now = now.as_str().map(str::to_owned);
            if now.as_deref() == Some(value) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{css} has {name}={now:?}, not {value:?}, after {timeout:?}:\n{}",
                self.page_text()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub fn select(&self, css: &str, value: &str) {
        let e = self.find(css);
        self.runtime
            .block_on(e.select_by_value(value))
            .unwrap_or_else(|err| panic!("selecting {value} in {css}: {err}"));
    }

    pub fn text(&self, e: &Element) -> String {
        self.runtime.block_on(e.text()).expect("reading text")
    }

    pub fn attr(&self, e: &Element, name: &str) -> Option<String> {
        self.runtime.block_on(e.attr(name)).expect("reading an attribute")
    }

    /// The visible text of the page (for failure messages).
    pub fn page_text(&self) -> String {
        let client = self.client().clone();
        self.runtime.block_on(async move { client.find(Locator::Css("body")).await?.text().await }).unwrap_or_default()
    }

    /// Waits until the element matching `css` shows text containing `expected` (read in the
    /// page each time, since the app re-renders elements).
    pub fn wait_for_text(&self, css: &str, expected: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let text = self.script(
                "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;",
                vec![json!(css)],
            );
            if let Some(text) = text.as_str()
                && text.contains(expected)
            {
                return text.to_owned();
            }
            assert!(
                Instant::now() < deadline,
                "{css} did not show {expected:?} within {timeout:?}; the page says:\n{}",
                self.page_text()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Waits until exactly `count` elements match `css` (the app re-renders lists after a fetch).
    pub fn wait_for_count(&self, css: &str, count: usize, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let found = self.script("return document.querySelectorAll(arguments[0]).length;", vec![json!(css)]);
            if found.as_u64() == Some(count as u64) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{css} matched {found} elements, not {count}, within {timeout:?}; the page says:\n{}",
                self.page_text()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Runs JavaScript in the page and returns its value.
    pub fn script(&self, js: &str, args: Vec<Value>) -> Value {
        let client = self.client().clone();
        let js = js.to_owned();
        self.runtime.block_on(async move { client.execute(&js, args).await }).expect("running a script")
    }

    /// Accepts the open `confirm()` dialog.
    pub fn accept_dialog(&self) {
        let client = self.client().clone();
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            let c = client.clone();
            if self.runtime.block_on(async move { c.accept_alert().await }).is_ok() {
                return;
            }
            assert!(Instant::now() < deadline, "no dialog to accept");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Saves a PNG of the page as `NN-name.png`; returns its path.
    pub fn screenshot(&mut self, name: &str) -> PathBuf {
        self.shot_count += 1;
        let path = self.shots.join(format!("{:02}-{name}.png", self.shot_count));
        let client = self.client().clone();
        let png = self.runtime.block_on(async move { client.screenshot().await }).expect("a screenshot");
        std::fs::write(&path, png).expect("writing the screenshot");
        path
    }

    /// Waits for a finished download named `name` in the browser's download folder.
    pub fn downloaded(&self, name: &str, timeout: Duration) -> Vec<u8> {
        let path = self.downloads.path().join(name);
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(bytes) = std::fs::read(&path)
                && !bytes.is_empty()
            {
                return bytes;
            }
            let present: Vec<String> = std::fs::read_dir(self.downloads.path())
                .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
                .unwrap_or_default();
            assert!(Instant::now() < deadline, "no download {name} within {timeout:?}; the folder holds {present:?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = self.runtime.block_on(client.close());
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// The vendored axe-core (npm `axe-core`, MPL-2.0), in `tests/vendor/`.
const AXE_FILE: &str = "axe-4.14.1.min.js";

/// `POST /session/{id}/se/log` with type `browser`: chromedriver's console log.
#[derive(Debug)]
struct BrowserLog;

impl fantoccini::wd::WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(&self, base_url: &url::Url, session_id: Option<&str>) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!("session/{}/se/log", session_id.unwrap_or_default()))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(json!({"type": "browser"}).to_string()))
    }
}

/// `POST /session/{id}/goog/cdp/execute`: a Chrome DevTools command through chromedriver.
#[derive(Debug)]
struct ChromeCdp {
    cmd: String,
    params: Value,
}

impl fantoccini::wd::WebDriverCompatibleCommand for ChromeCdp {
    fn endpoint(&self, base_url: &url::Url, session_id: Option<&str>) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!("session/{}/goog/cdp/execute", session_id.unwrap_or_default()))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(json!({"cmd": self.cmd, "params": self.params}).to_string()))
    }
}
