//! Groups seen during the run and the check tallies inside them.

use rustc_hash::FxHashMap as HashMap;

use crate::summary::{md5_hex, CheckSummary, GroupSummary};

/// Groups by path (root = `""`) with their checks, both in first-seen order.
#[derive(Debug, Clone)]
pub struct GroupTree {
    nodes: Vec<Node>,
    by_path: HashMap<Box<str>, usize>,
}

#[derive(Debug, Clone)]
struct Node {
    path: Box<str>,
    name: Box<str>,
    children: Vec<usize>,
    checks: Vec<Tally>,
    check_index: HashMap<Box<str>, usize>,
}

#[derive(Debug, Clone)]
struct Tally {
    name: Box<str>,
    passes: u64,
    fails: u64,
}

impl Default for GroupTree {
    fn default() -> Self {
        let mut by_path = HashMap::default();
        by_path.insert("".into(), 0);
        GroupTree {
            nodes: vec![Node::new("", "")],
            by_path,
        }
    }
}

impl Node {
    fn new(path: &str, name: &str) -> Node {
        Node {
            path: path.into(),
            name: name.into(),
            children: Vec::new(),
            checks: Vec::new(),
            check_index: HashMap::default(),
        }
    }
}

impl GroupTree {
    /// Records that the group at `path` (`::g1::g2`) exists; parents are created first.
    /// Returns its node index.
    pub fn see(&mut self, path: &str) -> usize {
        if let Some(&i) = self.by_path.get(path) {
            return i;
        }
        // Group names cannot contain "::", so the last segment is the name.
        let (parent_path, name) = path.rsplit_once("::").unwrap_or(("", path));
        let parent = self.see(parent_path);
        let i = self.nodes.len();
        self.nodes.push(Node::new(path, name));
        self.nodes[parent].children.push(i);
        self.by_path.insert(path.into(), i);
        i
    }

    /// Counts one outcome of check `name` in the group at `path`.
    pub fn add_check(&mut self, path: &str, name: &str, passed: bool) {
        let (passes, fails) = if passed { (1, 0) } else { (0, 1) };
        self.add_checks(path, name, passes, fails);
    }

    /// Counts `passes` and `fails` of check `name` in the group at `path`.
    pub fn add_checks(&mut self, path: &str, name: &str, passes: u64, fails: u64) {
        let g = self.see(path);
        let node = &mut self.nodes[g];
        let i = match node.check_index.get(name) {
            Some(&i) => i,
            None => {
                node.checks.push(Tally {
                    name: name.into(),
                    passes: 0,
                    fails: 0,
                });
                node.check_index.insert(name.into(), node.checks.len() - 1);
                node.checks.len() - 1
            }
        };
        let tally = &mut node.checks[i];
        tally.passes += passes;
        tally.fails += fails;
    }

    /// The node index of the group at `path`, if seen.
    pub fn index(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).copied()
    }

    /// The tree as summary data.
    pub fn summary(&self) -> GroupSummary {
        self.node_summary(0)
    }

    fn node_summary(&self, i: usize) -> GroupSummary {
        let n = &self.nodes[i];
        GroupSummary {
            name: n.name.to_string(),
            path: n.path.to_string(),
            id: md5_hex(&n.path),
            groups: n.children.iter().map(|&c| self.node_summary(c)).collect(),
            checks: n
                .checks
                .iter()
                .map(|t| {
                    let path = format!("{}::{}", n.path, t.name);
                    CheckSummary {
                        name: t.name.to_string(),
                        id: md5_hex(&path),
                        path,
                        passes: t.passes,
                        fails: t.fails,
                    }
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_groups_in_first_seen_order() {
        let mut t = GroupTree::default();
        t.see("::b::inner");
        t.see("::a");
        t.see("::b");
        let s = t.summary();
        assert_eq!(s.path, "");
        assert_eq!(s.id, "d41d8cd98f00b204e9800998ecf8427e");
        let names: Vec<_> = s.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(s.groups[0].groups[0].path, "::b::inner");
        assert_eq!(s.groups[0].groups[0].name, "inner");
    }

    #[test]
    fn checks_tally_per_group_and_name() {
        let mut t = GroupTree::default();
        t.add_check("", "status is 200", true);
        t.add_check("::g1", "ok", true);
        t.add_check("", "status is 200", false);
        t.add_check("::g1", "ok", true);
        t.add_check("", "body", true);
        let s = t.summary();
        assert_eq!(s.checks.len(), 2);
        assert_eq!((s.checks[0].passes, s.checks[0].fails), (1, 1));
        assert_eq!(s.checks[0].path, "::status is 200");
        assert_eq!(s.checks[1].name, "body");
        let g1 = &s.groups[0];
        assert_eq!(g1.id, "9ccb03cc5acd728a2fe595bbd1f14da3");
        assert_eq!(g1.checks[0].path, "::g1::ok");
        assert_eq!(g1.checks[0].id, "a78dc076641b6ca35ffd09a7c2c8ee7d");
        assert_eq!(g1.checks[0].passes, 2);
    }
}
