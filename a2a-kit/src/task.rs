//! The task lifecycle: [`TaskStateMachine`] is the one place that decides which state
//! transitions are legal. Stores call it before applying any status change, so an illegal
//! transition is an error and is never written.
//!
//! The spec has no explicit table; this one follows from its normative text:
//!
//! | from | to |
//! |---|---|
//! | (new task) | SUBMITTED, WORKING, or directly any terminal or interrupted state |
//! | SUBMITTED | any state but SUBMITTED |
//! | WORKING | WORKING (another progress update), INPUT_REQUIRED, AUTH_REQUIRED, any terminal |
//! | INPUT_REQUIRED, AUTH_REQUIRED | WORKING, the same interrupted state again, any terminal |
//! | COMPLETED, FAILED, CANCELED, REJECTED | nothing: terminal tasks are immutable |
//!
//! `TASK_STATE_UNSPECIFIED` is never a legal target.

pub use crate::protocol::TaskState;

/// An illegal transition, with both states named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("illegal task state transition from {} to {}", .from.as_str(), .to.as_str())]
pub struct TransitionError {
    /// The state the task is in.
    pub from: TaskState,
    /// The state that was asked for.
    pub to: TaskState,
}

/// Decides task state transitions.
///
/// ```
/// use a2a_kit::task::{TaskState, TaskStateMachine};
/// assert!(TaskStateMachine::check(TaskState::Working, TaskState::Completed).is_ok());
/// assert!(TaskStateMachine::check(TaskState::Completed, TaskState::Working).is_err());
/// assert!(TaskStateMachine::check(TaskState::InputRequired, TaskState::Working).is_ok());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskStateMachine;

impl TaskStateMachine {
    /// Whether a new task may start in `state`.
    pub fn check_initial(state: TaskState) -> Result<(), TransitionError> {
        if state == TaskState::Unspecified {
            Err(TransitionError {
                from: TaskState::Unspecified,
                to: state,
            })
        } else {
            Ok(())
        }
    }

    /// Whether a task in `from` may move to `to`.
    pub fn check(from: TaskState, to: TaskState) -> Result<(), TransitionError> {
        use TaskState::*;
        let ok = match (from, to) {
            (_, Unspecified) | (Unspecified, _) => false,
            (f, _) if f.is_terminal() => false,
            (_, Submitted) => false,
            (Submitted, _) => true,
            (Working, _) => true,
            (InputRequired | AuthRequired, Working) => true,
            (InputRequired, InputRequired) | (AuthRequired, AuthRequired) => true,
            (InputRequired | AuthRequired, t) => t.is_terminal(),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(TransitionError { from, to })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskState::*;
    use proptest::prelude::*;

    fn any_state() -> impl Strategy<Value = TaskState> {
        prop::sample::select(TaskState::ALL.to_vec())
    }

    proptest! {
        #[test]
        fn terminal_states_are_immutable(from in any_state(), to in any_state()) {
            if from.is_terminal() {
                prop_assert!(TaskStateMachine::check(from, to).is_err());
            }
        }

        #[test]
        fn unspecified_is_never_legal(s in any_state()) {
            prop_assert!(TaskStateMachine::check(s, Unspecified).is_err());
            prop_assert!(TaskStateMachine::check(Unspecified, s).is_err());
        }

        #[test]
        fn every_live_state_can_end(from in any_state(), to in any_state()) {
            if !from.is_terminal() && from != Unspecified && to.is_terminal() {
                prop_assert!(TaskStateMachine::check(from, to).is_ok());
            }
        }

        /// A random walk that only applies legal transitions never leaves a terminal state
        /// and never goes back to SUBMITTED.
        #[test]
        fn random_walks_respect_the_rules(steps in prop::collection::vec(any_state(), 1..40)) {
            let mut state = Submitted;
            let mut ended = false;
            for to in steps {
                match TaskStateMachine::check(state, to) {
                    Ok(()) => {
                        prop_assert!(!ended, "moved out of a terminal state");
                        prop_assert_ne!(to, Submitted);
                        state = to;
                        ended = state.is_terminal();
                    }
                    Err(e) => {
                        prop_assert_eq!(e.from, state);
                        prop_assert_eq!(e.to, to);
                    }
                }
            }
        }
    }

    #[test]
    fn interrupted_states_resume_to_working() {
        assert!(TaskStateMachine::check(InputRequired, Working).is_ok());
        assert!(TaskStateMachine::check(AuthRequired, Working).is_ok());
        assert!(TaskStateMachine::check(InputRequired, AuthRequired).is_err());
        assert!(TaskStateMachine::check(Working, Submitted).is_err());
    }
}
