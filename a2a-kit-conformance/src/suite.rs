//! The one list of the suite's checks, by group ([`__with_checks!`](crate::__with_checks)), and
//! what is made from it: the crate's [`CORE`](crate::CORE), [`PUSH_CONFIGS`](crate::PUSH_CONFIGS),
//! [`PUSH_OUTBOX`](crate::PUSH_OUTBOX), [`CLUSTER`](crate::CLUSTER) and
//! [`REMOTE_TASKS`](crate::REMOTE_TASKS), and one test per check
//! and store ([`store_tests!`](crate::store_tests)). A check added to the list is in both.

/// Hands the lists of checks, by group, to the macro `$callback` of this crate (after the
/// tokens given to it). The only place the checks are listed.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_checks {
    ($callback:ident ! { $($args:tt)* }) => {
        $crate::$callback! {
            $($args)*
            core: [
                create_and_get,
                task_views,
                status_updates,
                artifact_updates,
                history_semantics,
                event_log,
                create_with_events,
                list_empty,
                list_order_and_pagination,
                list_filters,
                list_views,
                list_page_tokens,
                list_pagination_is_stable_under_inserts,
                retention,
                task_ids_in_states,
                json_fidelity,
                concurrent_appends_across_tasks,
                concurrent_appends_to_one_task,
                concurrent_refusals_stay_their_own,
                model_replay,
                owners,
            ],
            push_configs: [
                push_configs,
                push_configs_go_with_their_task,
                push_config_fidelity,
                push_config_limit,
            ],
            push_outbox: [
                outbox_lanes,
                outbox_orphaned_work,
            ],
            cluster: [
                cluster_replies_without_another_holder,
            ],
            remote_tasks: [
                remote_saves_compare_revisions,
                remote_concurrent_saves,
                remote_record_fidelity,
                remote_unsettled_all_and_remove,
                remote_finished_purge,
                remote_token_claims,
                remote_token_binding,
                remote_token_purge,
                remote_concurrent_claims,
            ],
        }
    };
}

/// The crate's lists of checks, one `const` per group.
#[doc(hidden)]
#[macro_export]
macro_rules! __check_consts {
    (
        core: [$($core:ident),* $(,)?],
        push_configs: [$($pc:ident),* $(,)?],
        push_outbox: [$($po:ident),* $(,)?],
        cluster: [$($cl:ident),* $(,)?],
        remote_tasks: [$($rt:ident),* $(,)?] $(,)?
    ) => {
        /// The core checks, run on every store.
        ///
        /// ```
        /// assert!(a2a_kit_conformance::CORE.len() > 10);
        /// ```
        pub const CORE: &[$crate::Check] = &[$($crate::__check!($core)),*];
        /// The checks of [`Capability::PushConfigs`](crate::Capability::PushConfigs).
        pub const PUSH_CONFIGS: &[$crate::Check] = &[$($crate::__check!($pc)),*];
        /// The checks of [`Capability::PushOutbox`](crate::Capability::PushOutbox).
        pub const PUSH_OUTBOX: &[$crate::Check] = &[$($crate::__check!($po)),*];
        /// The checks of [`Capability::Cluster`](crate::Capability::Cluster).
        pub const CLUSTER: &[$crate::Check] = &[$($crate::__check!($cl)),*];
        /// The checks of [`Capability::RemoteTasks`](crate::Capability::RemoteTasks).
        pub const REMOTE_TASKS: &[$crate::Check] = &[$($crate::__check!($rt)),*];
    };
}

/// The [`Check`](crate::Check) of the check function `$f` of this crate.
#[doc(hidden)]
#[macro_export]
macro_rules! __check {
    ($f:ident) => {
        $crate::Check {
            name: ::core::stringify!($f),
            run: |s| ::std::boxed::Box::pin($crate::$f(s)),
        }
    };
}

/// `yes` or `no`, as a `bool`.
#[doc(hidden)]
#[macro_export]
macro_rules! __flag {
    (yes) => {
        true
    };
    (no) => {
        false
    };
}

/// One `#[tokio::test]` per check and store, so a failure names both: for each store, a
/// module with the core checks (`core`), the checks of each capability (`push_configs`,
/// `push_outbox`, `cluster`, `remote_tasks`: ignored, with the reason, when the store is declared without it),
/// any `also` checks (`also`, e.g. [`kit_cursor_format`](crate::kit_cursor_format)), and a test
/// `capabilities` that the store has exactly the capabilities declared.
///
/// `run(check) { ... }` runs `check` (a [`Check`](crate::Check)) on a fresh store; it is the
/// body of an `async fn` in the store's module, which sees the items of the module the macro
/// is called in. Needs `tokio` (`macros`, `rt-multi-thread`) among the caller's
/// dev-dependencies.
///
/// ```
/// use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
///
/// fn memory() -> InMemoryTaskManager {
///     InMemoryTaskManager::new(InMemoryConfig { max_tasks: 100_000, terminal_ttl: None })
/// }
///
/// a2a_kit_conformance::store_tests! {
///     /// The in-memory store.
///     in_memory {
///         push_configs: yes,
///         push_outbox: no,
///         cluster: no,
///         remote_tasks: yes,
///         also: [kit_cursor_format],
///         run(check) { check.run_on(memory()).await }
///     }
/// }
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! store_tests {
    ($(
        $(#[$meta:meta])*
        $store:ident {
            push_configs: $pc:ident,
            push_outbox: $po:ident,
            cluster: $cl:ident,
            remote_tasks: $rt:ident,
            $(also: [$($also:ident),* $(,)?],)?
            run($check:ident) $body:block
        }
    )*) => {$(
        $crate::__with_checks!(__store_tests! {
            $(#[$meta])*
            $store [$pc $po $cl $rt] [$($($also)*)?] ($check) $body
        });
    )*};
}

/// The tests of one store (see [`store_tests!`](crate::store_tests)).
#[doc(hidden)]
#[macro_export]
macro_rules! __store_tests {
    (
        $(#[$meta:meta])*
        $store:ident [$pc:ident $po:ident $cl:ident $rt:ident] [$($also:ident)*] ($check:ident) $body:block
        core: [$($core:ident),* $(,)?],
        push_configs: [$($pcc:ident),* $(,)?],
        push_outbox: [$($poc:ident),* $(,)?],
        cluster: [$($clc:ident),* $(,)?],
        remote_tasks: [$($rtc:ident),* $(,)?] $(,)?
    ) => {
        $(#[$meta])*
        mod $store {
            #[allow(unused_imports)]
            use super::*;

            async fn run($check: $crate::Check) $body

            /// The core checks.
            mod core {
                $crate::__group_tests!(yes "" [$($core)*]);
            }

            /// The checks of push configs.
            mod push_configs {
                $crate::__group_tests!($pc "the store has no PushConfigStore (TaskManager::push_configs returns None)" [$($pcc)*]);
            }

            /// The checks of the push outbox.
            mod push_outbox {
                $crate::__group_tests!($po "the store has no PushOutbox (TaskManager::push_outbox returns None)" [$($poc)*]);
            }

            /// The checks of the cluster capability.
            mod cluster {
                $crate::__group_tests!($cl "the store has no ClusterStore (TaskManager::cluster returns None)" [$($clc)*]);
            }

            /// The checks of the remote tasks capability.
            mod remote_tasks {
                $crate::__group_tests!($rt "the store has no RemoteTaskStore (TaskManager::remote_tasks returns None)" [$($rtc)*]);
            }

            /// Checks beyond the groups.
            mod also {
                $crate::__group_tests!(yes "" [$($also)*]);
            }

            /// The store has the capabilities declared, no more, no less.
            #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn capabilities() {
                run($crate::Check {
                    name: "capabilities",
                    run: |s| {
                        ::std::boxed::Box::pin($crate::capabilities_as_declared(
                            s,
                            $crate::Capabilities {
                                push_configs: $crate::__flag!($pc),
                                push_outbox: $crate::__flag!($po),
                                cluster: $crate::__flag!($cl),
                                remote_tasks: $crate::__flag!($rt),
                            },
                        ))
                    },
                })
                .await;
            }
        }
    };
}

/// One test per check, run with the store module's `run`; ignored (with `$why`) for `no`.
#[doc(hidden)]
#[macro_export]
macro_rules! __group_tests {
    (yes $why:literal [$($c:ident)*]) => {$(
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $c() {
            super::run($crate::__check!($c)).await;
        }
    )*};
    (no $why:literal [$($c:ident)*]) => {$(
        #[::tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = $why]
        async fn $c() {
            super::run($crate::__check!($c)).await;
        }
    )*};
}
