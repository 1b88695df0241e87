//! The in-memory store's ListTasks index: each owner's tasks in ListTasks order, so one
//! caller's ListTasks walks its own tasks, never the whole store (issue #29: a caller with
//! no task used to scan all of them, under the store's lock).

use std::collections::BTreeSet;
use std::collections::btree_set;
use std::ops::Bound;
use std::sync::Arc;

use super::super::Owner;
use crate::fast_map::FastMap;

/// A task's place in ListTasks order: (status timestamp millis, id), listed newest first.
/// The id is the one `Arc` the task map's key holds.
pub(super) type Key = (i64, Arc<str>);

/// Tasks of each owner (`None`: tasks created without one), each in ListTasks order.
#[derive(Debug, Default)]
pub(super) struct Listings {
    /// Kept apart: an open agent's tasks all belong to nobody, and it needs no hashing.
    unowned: Listing,
    owned: FastMap<Owner, Listing>,
}

/// No task: what an owner without a listing lists.
const NONE: &Listing = &Listing::Few(Vec::new());

impl Listings {
    /// The tasks of `owner`.
    pub(super) fn of(&self, owner: Option<&Owner>) -> &Listing {
        match owner {
            None => &self.unowned,
            Some(o) => self.owned.get(o).unwrap_or(NONE),
        }
    }

    /// Index a new task of `owner`; returns the owner to keep with the task: the key this
    /// index holds, so an owner's tasks share one copy of it.
    pub(super) fn insert(&mut self, owner: Option<Owner>, key: Key) -> Option<Owner> {
        use std::collections::hash_map::Entry;
        let Some(owner) = owner else {
            self.unowned.insert(key);
            return None;
        };
        match self.owned.entry(owner) {
            Entry::Occupied(mut known) => {
                known.get_mut().insert(key);
                Some(known.key().clone())
            }
            Entry::Vacant(new) => {
                let owner = new.key().clone();
                new.insert(Listing::One(key));
                Some(owner)
            }
        }
    }

    pub(super) fn remove(&mut self, owner: Option<&Owner>, key: &Key) {
        match owner {
            None => self.unowned.remove(key),
            Some(o) => {
                let Some(listing) = self.owned.get_mut(o) else {
                    return;
                };
                listing.remove(key);
                // An owner whose tasks all went costs nothing.
                if listing.len() == 0 {
                    self.owned.remove(o);
                }
            }
        }
    }

    /// A task's status timestamp changed from `from` to `to` (millis).
    pub(super) fn moved(&mut self, owner: Option<&Owner>, id: &Arc<str>, from: i64, to: i64) {
        let listing = match owner {
            None => &mut self.unowned,
            Some(o) => match self.owned.get_mut(o) {
                Some(listing) => listing,
                None => return,
            },
        };
        listing.remove(&(from, id.clone()));
        listing.insert((to, id.clone()));
    }
}

/// One owner's tasks in ascending key order. Most owners have a few tasks: one is held in
/// place, a few in a sorted `Vec` (a B-tree's one node has room for 11 keys: ~290 bytes for
/// an owner with one task); past [`FEW`] they move to a B-tree, where adding, moving and
/// removing one stays O(log n).
#[derive(Debug)]
pub(super) enum Listing {
    One(Key),
    Few(Vec<Key>),
    Many(BTreeSet<Key>),
}

/// The most tasks a [`Listing::Few`] holds; a `Many` that shrinks to a quarter of it goes back.
/// (Small in the unit tests, so their few tasks cross it both ways.)
const FEW: usize = if cfg!(test) { 4 } else { 32 };

impl Default for Listing {
    fn default() -> Self {
        Listing::Few(Vec::new())
    }
}

impl Listing {
    pub(super) fn len(&self) -> usize {
        match self {
            Listing::One(_) => 1,
            Listing::Few(v) => v.len(),
            Listing::Many(s) => s.len(),
        }
    }

    /// The keys of a `One` or a `Few`, in order (none of a `Many`'s).
    fn few(&self) -> &[Key] {
        match self {
            Listing::One(k) => std::slice::from_ref(k),
            Listing::Few(v) => v,
            Listing::Many(_) => &[],
        }
    }

    fn insert(&mut self, key: Key) {
        match self {
            Listing::One(k) if *k == key => {}
            Listing::One(_) => {
                if let Listing::One(k) = std::mem::take(self) {
                    let mut v = vec![k, key];
                    v.sort_unstable();
                    *self = Listing::Few(v);
                }
            }
            Listing::Few(v) if v.len() < FEW => {
                // Nearly always the newest: a push.
                let at = v.partition_point(|k| *k < key);
                if v.get(at) != Some(&key) {
                    v.insert(at, key);
                }
            }
            Listing::Few(v) => {
                let mut set: BTreeSet<Key> = std::mem::take(v).into_iter().collect();
                set.insert(key);
                *self = Listing::Many(set);
            }
            Listing::Many(s) => {
                s.insert(key);
            }
        }
    }

    fn remove(&mut self, key: &Key) {
        match self {
            Listing::One(k) if k == key => *self = Listing::Few(Vec::new()),
            Listing::One(_) => {}
            Listing::Few(v) => {
                if let Ok(at) = v.binary_search(key) {
                    v.remove(at);
                }
            }
            Listing::Many(s) => {
                s.remove(key);
                if s.len() <= FEW / 4 {
                    *self = Listing::Few(std::mem::take(s).into_iter().collect());
                }
            }
        }
    }

    /// The tasks before `cursor` (all without one), newest first.
    pub(super) fn newest_first(&self, cursor: Option<&Key>) -> NewestFirst<'_> {
        match self {
            Listing::Many(s) => {
                let upper = cursor.map_or(Bound::Unbounded, Bound::Excluded);
                NewestFirst::Many(s.range((Bound::Unbounded, upper)).rev())
            }
            _ => {
                let v = self.few();
                let end = cursor.map_or(v.len(), |c| v.partition_point(|k| k < c));
                NewestFirst::Few(v[..end].iter().rev())
            }
        }
    }

    /// How many tasks have a status timestamp at or after `floor` (millis).
    pub(super) fn count_from(&self, floor: i64) -> usize {
        match self {
            // The smallest key at `floor` has the empty id.
            Listing::Many(s) => {
                let n = s.range((floor, Arc::<str>::from(""))..).count();
                #[cfg(test)]
                walked(n);
                n
            }
            _ => {
                let v = self.few();
                v.len() - v.partition_point(|(ts, _)| *ts < floor)
            }
        }
    }
}

/// An iterator over a [`Listing`], newest first.
pub(super) enum NewestFirst<'a> {
    Few(std::iter::Rev<std::slice::Iter<'a, Key>>),
    Many(std::iter::Rev<btree_set::Range<'a, Key>>),
}

impl<'a> Iterator for NewestFirst<'a> {
    type Item = &'a Key;

    fn next(&mut self) -> Option<&'a Key> {
        let key = match self {
            NewestFirst::Few(it) => it.next(),
            NewestFirst::Many(it) => it.next(),
        };
        #[cfg(test)]
        walked(usize::from(key.is_some()));
        key
    }
}

#[cfg(test)]
thread_local! {
    /// Keys of a listing this thread walked: the tests count ListTasks' work, not its time.
    pub(super) static WALKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
fn walked(n: usize) {
    WALKED.with(|w| w.set(w.get() + n));
}

#[cfg(test)]
impl Listings {
    /// Every (owner, key) held, for the tests to compare with the tasks.
    pub(super) fn all(&self) -> Vec<(Option<Owner>, Key)> {
        let keys = |owner: Option<&Owner>, l: &Listing| -> Vec<(Option<Owner>, Key)> {
            l.newest_first(None)
                .map(|k| (owner.cloned(), k.clone()))
                .collect()
        };
        let mut all = keys(None, &self.unowned);
        for (owner, listing) in &self.owned {
            assert!(listing.len() > 0, "an empty listing of {owner} was kept");
            all.extend(keys(Some(owner), listing));
        }
        all
    }
}
