//! A model of the task lifecycle replayed against the store, the kit's cursor format, and
//! owners.

use serde_json::json;

use a2a_kit::protocol::{Part, Role, StreamResponse, Task, TaskState};
use a2a_kit::store::{ListQuery, Owner, Seq, TaskView, apply_event};

use crate::fixtures::*;
use crate::*;

/// A long pseudo-random run of every mutating operation against a model built with
/// [`apply_event`]: after each step the store holds the model's task, the
/// model's log and the same error for refused events.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::model_replay(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn model_replay(s: Store) {
    struct Model {
        task: Task,
        log: Vec<StreamResponse>,
    }
    let b = base();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let mut models: Vec<Model> = Vec::new();
    for i in 0..5 {
        let t = new_task(
            &format!("r{i}"),
            &format!("rc{}", i % 2),
            TaskState::Submitted,
            b + i,
        );
        create(&s, &t).await;
        models.push(Model {
            log: vec![StreamResponse::Task(t.clone())],
            task: t,
        });
    }
    for step in 0..300i64 {
        let i = next(models.len() as u64) as usize;
        let m = &mut models[i];
        let (id, ctx) = (m.task.id.clone(), m.task.context_id.clone());
        let at = b + 100 + step;
        let op = next(20);
        if op < 3 {
            let message = msg(Role::User, &format!("{id}-u{step}"), "follow-up");
            assert_eq!(
                s.add_message(&id, message.clone()).await,
                Ok(()),
                "step {step}"
            );
            m.task.history.push(message);
        } else {
            let ev = match op {
                3..=6 => {
                    let message =
                        (op % 2 == 0).then(|| status_msg(&format!("{id}-s{step}"), "working"));
                    status_ev(&id, &ctx, TaskState::Working, at, message)
                }
                7 => status_ev(
                    &id,
                    &ctx,
                    TaskState::InputRequired,
                    at,
                    Some(msg(Role::Agent, &format!("{id}-q{step}"), "?")),
                ),
                8 => status_ev(&id, &ctx, TaskState::AuthRequired, at, None),
                9 => {
                    let end = [
                        TaskState::Completed,
                        TaskState::Failed,
                        TaskState::Canceled,
                        TaskState::Rejected,
                    ];
                    status_ev(
                        &id,
                        &ctx,
                        end[next(4) as usize],
                        at,
                        Some(msg(Role::Agent, &format!("{id}-e{step}"), "end")),
                    )
                }
                10 => status_ev(&id, &ctx, TaskState::Submitted, at, None),
                11 => status_ev("someone-else", &ctx, TaskState::Working, at, None),
                _ => {
                    let aid = format!("art{}", next(3));
                    let parts = match next(4) {
                        0 => vec![Part::text("")],
                        1 => vec![Part::text(format!("t{step}")), Part::text("")],
                        2 => vec![Part::data(json!({"step": step}))],
                        _ => vec![Part::text(format!("t{step}"))],
                    };
                    let mut a = artifact(&aid, parts);
                    if next(5) == 0 {
                        a.name = Some(format!("n{step}"));
                        a.metadata = Some(
                            json!({"s": step})
                                .as_object()
                                .cloned()
                                .unwrap_or_default()
                                .into(),
                        );
                    }
                    artifact_ev(&id, &ctx, a, next(3) > 0, false)
                }
            };
            let mut after = m.task.clone();
            let want = apply_event(&mut after, &ev).map(|()| m.log.len() as Seq + 1);
            let got = s.append_event(&id, ev.clone()).await;
            assert_eq!(got, want, "step {step}: append_event result on {id}");
            if want.is_ok() {
                m.task = after;
                m.log.push(ev);
            }
        }
        let rec = full(&s, &id).await;
        assert_eq!(rec.task, m.task, "step {step}: task {id}");
        assert_eq!(
            rec.last_seq,
            m.log.len() as Seq,
            "step {step}: last_seq of {id}"
        );
    }
    for m in &models {
        let got: Vec<StreamResponse> = all_events(&s, &m.task.id)
            .await
            .into_iter()
            .map(|r| r.event)
            .collect();
        assert_eq!(got, m.log, "log of {}", m.task.id);
    }
    let mut q = query(3);
    q.view = TaskView::FULL;
    let listed = walk(&s, q).await;
    let want = list_order(
        models
            .iter()
            .map(|m| (ms_of(&m.task), m.task.id.clone()))
            .collect(),
    );
    assert_eq!(ids(&listed), want, "ListTasks order after the run");
    for t in &listed {
        let m = models
            .iter()
            .find(|m| m.task.id == t.id)
            .expect("listed task exists");
        assert_eq!(t, &m.task, "listed task {}", t.id);
    }
}

/// The page-token format shared by the kit's own stores (`base64url("{millis}:{id}")` of the
/// last task on the page), so a token from one kit store pages another. Not part of
/// [`run_all`]: other stores may use any opaque token.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::kit_cursor_format(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn kit_cursor_format(s: Store) {
    let b = base();
    for i in 0..5i64 {
        create(
            &s,
            &new_task(&format!("cf{i}"), "c", TaskState::Working, b + i / 2),
        )
        .await;
    }
    let page = s.list_tasks(&query(3)).await.expect("list");
    let last = page.tasks.last().expect("a full page");
    assert_eq!(page.next_page_token, encode_cursor(ms_of(last), &last.id));
    let mut q = query(3);
    q.page_token = Some(encode_cursor(b + 1, "cf3"));
    assert_eq!(
        ids(&s.list_tasks(&q).await.expect("list").tasks),
        ["cf2", "cf1", "cf0"]
    );
}

/// Task owners: every way of creating a task keeps its owner, reads return it, events leave
/// it alone, and ListTasks lists exactly one owner's tasks (`None`: the tasks created without
/// one), with filters, `totalSize` and pages counting that owner's tasks only.
///
/// ```
/// # use a2a_kit::store::{InMemoryConfig, InMemoryTaskManager};
/// # use a2a_kit_conformance as conformance;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// conformance::owners(std::sync::Arc::new(InMemoryTaskManager::new(InMemoryConfig { max_tasks: 1000, terminal_ttl: None }))).await;
/// # });
/// ```
pub async fn owners(s: Store) {
    let b = base();
    let alice = Owner::new(Some("acme"), Some("alice"));
    let bob = Owner::new(Some("acme"), Some("bob"));
    // Odd characters are kept exactly: `a/b` under no tenant is not tenant `a`, subject `b`.
    let odd = Owner::new(None, Some("a/b ü%"));
    let tenant_only = Owner::new(Some("a"), Some("b"));
    let owners = [
        alice.clone(),
        bob.clone(),
        None,
        odd.clone(),
        tenant_only.clone(),
    ];
    let mut want: Vec<Vec<(i64, String)>> = vec![Vec::new(); owners.len()];
    for i in 0..20usize {
        let o = i % owners.len();
        let id = format!("own-{i:02}");
        let at = b + i as i64 * 1000;
        let ctx = if i % 2 == 0 { "even" } else { "odd" };
        let task = new_task(&id, ctx, TaskState::Submitted, at);
        let owner = owners[o].clone();
        // Every creation path, in turn.
        match i % 3 {
            0 => {
                s.create_task(task, Some("skill".into()), owner)
                    .await
                    .expect("create_task");
            }
            1 => {
                let ev = status_ev(&id, ctx, TaskState::Working, at, None);
                s.create_task_with_events(task, None, owner, vec![ev])
                    .await
                    .expect("create_task_with_events");
            }
            _ => {
                let ev = status_ev(&id, ctx, TaskState::Completed, at, None);
                s.create_task_with_released_log(task, None, owner, vec![ev])
                    .await
                    .expect("create_task_with_released_log");
            }
        }
        want[o].push((at, id));
    }
    // An event does not change the owner.
    append(
        &s,
        "own-00",
        status_ev("own-00", "even", TaskState::Working, b + 100_000, None),
    )
    .await;
    let moved = want[0]
        .iter()
        .position(|(_, id)| id == "own-00")
        .expect("own-00");
    want[0][moved].0 = b + 100_000;
    for (o, owner) in owners.iter().enumerate() {
        for (_, id) in &want[o] {
            assert_eq!(
                &full(&s, id).await.owner,
                owner,
                "get_task({id}) returns its owner"
            );
        }
        let q = ListQuery {
            owner: owner.clone(),
            ..query(1)
        };
        assert_eq!(
            ids(&walk(&s, q.clone()).await),
            list_order(want[o].clone()),
            "ListTasks of {owner:?} lists its tasks, and only them"
        );
        let page = s.list_tasks(&q).await.expect("list");
        assert_eq!(
            page.total_size as usize,
            want[o].len(),
            "totalSize of {owner:?}"
        );
        let even = ListQuery {
            context_id: Some("even".into()),
            ..q.clone()
        };
        let want_even: Vec<_> = want[o]
            .iter()
            .filter(|(_, id)| id[4..].parse::<usize>().is_ok_and(|n| n % 2 == 0))
            .cloned()
            .collect();
        assert_eq!(
            ids(&walk(&s, even).await),
            list_order(want_even),
            "ListTasks of {owner:?} in one context"
        );
    }
    let nobody = ListQuery {
        owner: Owner::new(Some("globex"), Some("alice")),
        ..query(10)
    };
    let page = s.list_tasks(&nobody).await.expect("list");
    assert!(
        page.tasks.is_empty() && page.total_size == 0,
        "another tenant sees nothing: {page:?}"
    );
}
