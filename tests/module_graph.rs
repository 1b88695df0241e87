//! The layers of `a2a-kit` hold: its files import one another without a cycle, and no module
//! imports one on a higher floor of ARCHITECTURE.md's table (the modules "beside" may use any
//! floor; no floor uses them but where the table says so). Read from the source's `crate::`
//! and `super::` paths, as a reader would follow them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// ARCHITECTURE.md's floors of `a2a-kit`; `None`: beside the floors.
fn floor(module: &str) -> Option<u8> {
    Some(match module {
        "protocol" | "error" | "v03" | "grpc" | "auth" | "request" | "signing" | "fast_map"
        | "observe" => 1,
        "task" => 2,
        "store" => 3,
        "runtime" => 4,
        "skill" => 5,
        "server" => 6,
        "binding" => 7,
        _ => return None,
    })
}

/// Every `.rs` file under `src` by its module path (`store::postgres::lease`).
fn files(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read the source") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(src, &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            (module, p)
        })
        .collect()
}

/// The arrows between files: the longest module path each `crate::`/`super::` path names.
fn arrows(files: &BTreeMap<Vec<String>, PathBuf>) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let resolve = |parts: &[String]| {
        (0..=parts.len())
            .rev()
            .map(|n| parts[..n].to_vec())
            .find(|m| files.contains_key(m))
    };
    let mut out = BTreeMap::new();
    for (module, path) in files {
        let text = std::fs::read_to_string(path).expect("read a file");
        // Unit tests may reach anywhere: only the code that ships counts.
        let text = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        let mut targets = BTreeSet::new();
        for line in text
            .lines()
            .map(|l| l.split("//").next().unwrap_or_default())
        {
            for (i, _) in line
                .match_indices("crate::")
                .chain(line.match_indices("super::"))
            {
                let word_start = i == 0 || !line.as_bytes()[i - 1].is_ascii_alphanumeric();
                if !word_start || line[..i].ends_with("$") {
                    continue;
                }
                let is_super = line[i..].starts_with("super::");
                // `crate::` and `super::` are both seven characters.
                let rest = &line[i + 7..];
                let mut parts: Vec<String> = if is_super {
                    module[..module.len().saturating_sub(1)].to_vec()
                } else {
                    Vec::new()
                };
                let group = rest.starts_with('{');
                let names: Vec<&str> = if group {
                    rest[1..]
                        .split('}')
                        .next()
                        .unwrap_or_default()
                        .split(',')
                        .collect()
                } else {
                    vec![rest]
                };
                for name in names {
                    let mut p = parts.clone();
                    p.extend(
                        name.trim()
                            .split("::")
                            .map(|s| s.trim_matches(|c: char| !c.is_alphanumeric() && c != '_'))
                            .take_while(|s| !s.is_empty())
                            .map(str::to_string),
                    );
                    if let Some(t) = resolve(&p).filter(|t| t != module && !t.is_empty()) {
                        targets.insert(t);
                    }
                }
                parts.clear();
            }
        }
        out.insert(module.clone(), targets);
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../a2a-kit/src")
}

#[test]
fn no_import_cycle_between_files() {
    let files = files(&src());
    let arrows = arrows(&files);
    // A cycle is an arrow back into a file that reaches it.
    fn reaches(
        arrows: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        from: &Vec<String>,
        to: &Vec<String>,
        seen: &mut BTreeSet<Vec<String>>,
    ) -> bool {
        if from == to {
            return true;
        }
        if !seen.insert(from.clone()) {
            return false;
        }
        arrows
            .get(from)
            .is_some_and(|next| next.iter().any(|n| reaches(arrows, n, to, seen)))
    }
    let mut cycles = Vec::new();
    for (a, targets) in &arrows {
        for b in targets {
            if reaches(&arrows, b, a, &mut BTreeSet::new()) {
                cycles.push(format!("{} -> {}", a.join("::"), b.join("::")));
            }
        }
    }
    assert!(cycles.is_empty(), "arrows on an import cycle: {cycles:#?}");
    assert!(
        arrows.values().map(BTreeSet::len).sum::<usize>() > 100,
        "the graph was read"
    );
}

#[test]
fn no_floor_imports_a_higher_one() {
    let files = files(&src());
    let mut wrong = Vec::new();
    for (from, targets) in arrows(&files) {
        let Some(low) = from.first().and_then(|m| floor(m)) else {
            continue;
        };
        for to in targets {
            if let Some(high) = to.first().and_then(|m| floor(m))
                && high > low
            {
                wrong.push(format!(
                    "{} (floor {low}) -> {} (floor {high})",
                    from.join("::"),
                    to.join("::")
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "arrows running up: {wrong:#?}");
}

/// The operations know nothing of HTTP: `server` and the floors between it and the wire
/// types (`task`, `store`, `runtime`, `skill`) name no `http`, `hyper`, `axum` or `tower`
/// path. The edge in `binding` does, and on the first floor `auth` (an authenticator reads a
/// request's head) and `request` (typed extensions as `http::Extensions`, the tower stack's
/// type map).
#[test]
fn the_operations_know_nothing_of_http() {
    let files = files(&src());
    let mut wrong = Vec::new();
    for (module, path) in &files {
        let Some(level) = module.first().and_then(|m| floor(m)) else {
            continue;
        };
        if level < 2 || level > floor("server").unwrap() {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for web in [
                "http::",
                "hyper::",
                "axum::",
                "tower::",
                "tower_service::",
                "http_body",
            ] {
                let named = code.match_indices(web).any(|(i, _)| {
                    i == 0
                        || !code.as_bytes()[i - 1].is_ascii_alphanumeric()
                            && code.as_bytes()[i - 1] != b'_'
                });
                if named {
                    wrong.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "HTTP below the edge: {wrong:#?}");
}
