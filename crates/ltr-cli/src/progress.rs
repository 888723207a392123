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
}
