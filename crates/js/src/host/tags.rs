//! The tags of a VU's samples: one context per VU (k6's `state.Tags`) that every emitter
//! builds its samples' tags from.
//!
//! The context holds the VU's current tags with one value per key, as k6 keeps them: the
//! run's `tags` option, the scenario's tags over those, the `group` and `scenario` system
//! tags, and whatever the script sets with `exec.vu.tags` over any of them (deleting a key
//! takes it off, system tags included). A sample's tags are the context's, then the
//! sample's own user tags (a request's `tags` param, a check's or a metric's tags), then its
//! system tags (`method`, `status`, `url`, `check`, ...): later pairs win. A system tag that
//! `systemTags` leaves out is never set, so a user tag of that name stays, as in k6; `vu`
//! and `iter` come last when enabled.

use crate::run_options::SystemTags;

/// Pairs of one sample, on the stack for the usual counts.
pub(crate) type Pairs<'a> = smallvec::SmallVec<[(&'a str, &'a str); 24]>;

/// A VU's current tags.
#[derive(Default)]
pub(crate) struct TagContext {
    /// One pair per key, in the order keys were first set (the order only matters to the
    /// sample buffer's cache, which sees the same order for the same tags).
    current: Vec<(String, String)>,
    /// `systemTags`, when the script changed k6's default set.
    system: Option<SystemTags>,
    /// The `vu` and `iter` tag values, kept only when `systemTags` enables them.
    vu: String,
    iter: String,
}

impl TagContext {
    /// A context with the run's `tags`, whose system tags follow `systemTags`.
    pub(crate) fn new<'a>(
        system: Option<SystemTags>,
        run: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Self {
        let mut tags = TagContext {
            system,
            ..TagContext::default()
        };
        for (k, v) in run {
            tags.set(k, v);
        }
        tags
    }

    /// Whether the system tag `name` is set on samples (`systemTags`; k6's default set when
    /// not given).
    pub(crate) fn enabled(&self, name: &str) -> bool {
        self.system
            .as_ref()
            .is_none_or(|s| !s.disabled.contains(&name))
    }

    /// The tags of a VU starting a scenario, as k6 activates a VU: the run's tags, the
    /// scenario's over them, the root group and the scenario's name. Tags the script set in
    /// an earlier scenario are gone.
    pub(crate) fn activate<'a>(
        &mut self,
        run: impl IntoIterator<Item = (&'a String, &'a String)>,
        scenario_tags: impl IntoIterator<Item = (&'a String, &'a String)>,
        scenario: &str,
    ) {
        self.current.clear();
        for (k, v) in run.into_iter().chain(scenario_tags) {
            self.set(k, v);
        }
        self.set_system("group", "");
        self.set_system("scenario", scenario);
    }

    /// The tags of `setup`/`teardown`/`handleSummary` (`name`): the run's tags and the group
    /// `::name`, no scenario (as k6).
    pub(crate) fn lifecycle<'a>(
        &mut self,
        run: impl IntoIterator<Item = (&'a String, &'a String)>,
        name: &str,
    ) {
        self.current.clear();
        for (k, v) in run {
            self.set(k, v);
        }
        self.set_system("group", &format!("::{name}"));
    }

    /// Records the VU and iteration for the `vu`/`iter` tags (only when enabled).
    pub(crate) fn set_iteration(&mut self, vu: u64, iter: u64) {
        if self.system.as_ref().is_some_and(|s| s.vu || s.iter) {
            self.vu = vu.to_string();
            self.iter = iter.to_string();
        }
    }

    /// The current value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.current
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key` (what `exec.vu.tags.key = value` does).
    pub(crate) fn set(&mut self, key: &str, value: &str) {
        match self.current.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => {
                v.clear();
                v.push_str(value);
            }
            None => self.current.push((key.to_owned(), value.to_owned())),
        }
    }

    /// Sets the system tag `key` if it is enabled.
    fn set_system(&mut self, key: &str, value: &str) {
        if self.enabled(key) {
            self.set(key, value);
        }
    }

    /// Takes `key` off (`delete exec.vu.tags.key`).
    pub(crate) fn delete(&mut self, key: &str) {
        self.current.retain(|(k, _)| k != key);
    }

    /// The current tags, in the order they were set.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.current.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Enters `group(name)`: the group tag becomes `<current>::name`. Returns what
    /// [`TagContext::leave_group`] restores; `None` when `systemTags` leaves `group` out
    /// (the tag is not touched then, as in k6).
    pub(crate) fn enter_group(&mut self, name: &str) -> Option<String> {
        if !self.enabled("group") {
            return None;
        }
        let outer = self.get("group").unwrap_or_default().to_owned();
        let inner = format!("{outer}::{name}");
        self.set("group", &inner);
        Some(outer)
    }

    /// Leaves a group: the group tag is what it was when the group was entered.
    pub(crate) fn leave_group(&mut self, outer: Option<String>) {
        if let Some(outer) = outer {
            self.set("group", &outer);
        }
    }

    /// The tag pairs of one sample: the VU's tags, then `user`, then the enabled ones of
    /// `system`, then `vu` and `iter` if enabled. Later pairs win on equal keys.
    pub(crate) fn pairs<'a>(
        &'a self,
        user: &'a [(String, String)],
        system: &[(&'a str, &'a str)],
        out: &mut Pairs<'a>,
    ) {
        out.extend(self.iter());
        out.extend(user.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        match &self.system {
            None => out.extend_from_slice(system),
            Some(s) => {
                out.extend(
                    system
                        .iter()
                        .filter(|(k, _)| !s.disabled.contains(k))
                        .copied(),
                );
                if s.vu {
                    out.push(("vu", &self.vu));
                }
                if s.iter {
                    out.push(("iter", &self.iter));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn sample(
        tags: &TagContext,
        user: &[(&str, &str)],
        system: &[(&str, &str)],
    ) -> Vec<(String, String)> {
        let user = owned(user);
        let mut out = Pairs::new();
        tags.pairs(&user, system, &mut out);
        let set = rk6_metrics::TagSet::from_pairs(out.iter().copied());
        set.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn precedence_is_run_scenario_vu_user_system() {
        let run = owned(&[("a", "run"), ("b", "run"), ("c", "run")]);
        let scenario = owned(&[("b", "scenario"), ("c", "scenario")]);
        let mut tags = TagContext::new(None, run.iter().map(|(k, v)| (k, v)));
        tags.activate(
            run.iter().map(|(k, v)| (k, v)),
            scenario.iter().map(|(k, v)| (k, v)),
            "main",
        );
        tags.set("c", "vu");
        tags.set("d", "vu");
        let got = sample(
            &tags,
            &[("d", "user"), ("method", "X")],
            &[("method", "GET")],
        );
        assert_eq!(
            got,
            owned(&[
                ("a", "run"),
                ("b", "scenario"),
                ("c", "vu"),
                ("d", "user"),
                ("group", ""),
                ("method", "GET"),
                ("scenario", "main"),
            ])
        );
        // A new scenario starts from the run's and its own tags again.
        tags.activate(run.iter().map(|(k, v)| (k, v)), [], "next");
        assert_eq!(tags.get("d"), None);
        assert_eq!(tags.get("c"), Some("run"));
        assert_eq!(tags.get("scenario"), Some("next"));
    }

    #[test]
    fn groups_nest_under_the_current_group_tag_and_restore_it() {
        let mut tags = TagContext::default();
        tags.activate([], [], "s");
        let outer = tags.enter_group("a");
        let inner = tags.enter_group("b");
        assert_eq!(tags.get("group"), Some("::a::b"));
        tags.leave_group(inner);
        tags.leave_group(outer);
        assert_eq!(tags.get("group"), Some(""));
        tags.set("group", "mine");
        let g = tags.enter_group("c");
        assert_eq!(tags.get("group"), Some("mine::c"));
        tags.leave_group(g);
        assert_eq!(tags.get("group"), Some("mine"));
        tags.delete("scenario");
        assert_eq!(tags.iter().count(), 1, "only group is left");
    }

    #[test]
    fn system_tags_left_out_are_not_set_and_vu_iter_are_added() {
        let opts = crate::RunOptions::from_options(&rk6_options::Options {
            system_tags: Some(vec!["method".into(), "vu".into(), "iter".into()]),
            ..Default::default()
        })
        .unwrap();
        let mut tags = TagContext::new(opts.system_tags, []);
        tags.activate([], [], "s");
        assert!(tags.enter_group("g").is_none());
        tags.set_iteration(7, 3);
        let got = sample(
            &tags,
            &[("custom", "c")],
            &[("url", "u"), ("method", "GET")],
        );
        assert_eq!(
            got,
            owned(&[
                ("custom", "c"),
                ("iter", "3"),
                ("method", "GET"),
                ("vu", "7")
            ]),
            "no url, group or scenario; user tags stay; vu and iter added"
        );
        let got = sample(&tags, &[("url", "mine")], &[("url", "u")]);
        assert_eq!(
            got,
            owned(&[("iter", "3"), ("url", "mine"), ("vu", "7")]),
            "a user tag named like a system tag left out stays"
        );
    }
}
