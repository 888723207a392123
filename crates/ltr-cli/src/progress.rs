//! The terminal face of [`ltr_core::Progress`]: an indicatif bar on stderr, hidden when stderr is not a terminal
//! or the log level is above info.

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar that each learner stage (epochs, rounds, settings) restarts.
#[derive(Debug)]
pub struct Bar {
    bar: Mutex<Option<ProgressBar>>,
    visible: bool,
}

impl Bar {
    /// A bar drawn on stderr when `visible`.
    pub fn new(visible: bool) -> Self {
        Self {
            bar: Mutex::new(None),
            visible,
        }
    }
}

impl Bar {
    /// A bar for this process: drawn when stderr is a terminal and the log level shows info.
    pub fn for_terminal() -> Self {
        use std::io::IsTerminal;
        Self::new(std::io::stderr().is_terminal() && tracing::enabled!(tracing::Level::INFO))
    }

    /// Run `work` under a spinner naming it (reading, scoring, evaluating: steps with no count to show). The
    /// spinner ticks on its own thread, so a long parse still shows it is alive; it appears only after 2 s.
    pub fn stage<T>(&self, what: &str, work: impl FnOnce() -> T) -> T {
        if !self.visible {
            return work();
        }
        let started = std::time::Instant::now();
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut spinner: Option<ProgressBar> = None;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    if spinner.is_none() && started.elapsed().as_secs_f64() >= 2.0 {
                        let s = ProgressBar::new_spinner();
                        s.set_style(
                            ProgressStyle::with_template(&format!(
                                "{{spinner}} {what} {{elapsed_precise}}"
                            ))
                            .expect("valid template"),
                        );
                        s.enable_steady_tick(std::time::Duration::from_millis(120));
                        spinner = Some(s);
                    }
                }
                if let Some(s) = spinner {
                    s.finish_and_clear();
                }
            });
            let out = work();
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            out
        })
    }
}

impl ltr_core::Progress for Bar {
    fn begin(&self, what: &str, total: Option<u64>) {
        let bar = match total {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{bar:30}} {{pos}}/{{len}} {what} {{elapsed_precise}} eta {{eta}} {{msg}}"
            ))
            .expect("valid template"),
        );
        if !self.visible {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        if let Some(old) = self.bar.lock().expect("bar lock").replace(bar) {
            old.finish_and_clear();
        }
    }
    fn advance(&self, done: u64, message: &str) {
        if let Some(b) = self.bar.lock().expect("bar lock").as_ref() {
            b.set_position(done);
            if !message.is_empty() {
                b.set_message(message.to_string());
            }
        }
    }
    fn end(&self) {
        if let Some(b) = self.bar.lock().expect("bar lock").take() {
            b.finish_and_clear();
        }
    }
    fn stage_dyn(&self, what: &str, work: &mut dyn FnMut()) {
        self.stage(what, work)
    }
}
