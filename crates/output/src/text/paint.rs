//! ANSI colour of the text summary.

/// ANSI decoration, a no-op when colours are off.
#[derive(Clone, Copy)]
pub(crate) struct Paint {
    pub(crate) on: bool,
}

impl Paint {
    pub(crate) fn mark(self, ok: bool) -> String {
        match (ok, self.on) {
            (true, true) => "\x1b[32m✓\x1b[0m".into(),
            (false, true) => "\x1b[31m✗\x1b[0m".into(),
            (true, false) => "✓".into(),
            (false, false) => "✗".into(),
        }
    }

    pub(crate) fn faint(self, s: &str) -> String {
        if self.on {
            format!("\x1b[2m{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    }
}
