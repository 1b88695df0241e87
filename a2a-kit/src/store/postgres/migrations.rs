//! The schema's versioned migrations, embedded in the binary and applied by `sqlx`'s
//! migrator at connect time (its `_sqlx_migrations` table lives in the store's schema).

use std::borrow::Cow;

use futures::future::BoxFuture;
use sqlx::PgPool;
use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

use super::db;
use crate::store::StoreError;

/// Every migration, in order. Never edit one that has shipped: add the next.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        "tasks, events, push configs",
        include_str!("0001_init.sql"),
    ),
    (2, "leases", include_str!("0002_leases.sql")),
    (3, "push outbox", include_str!("0003_push_outbox.sql")),
    (
        4,
        "events without a foreign key",
        include_str!("0004_events_without_fk.sql"),
    ),
    (5, "push retries", include_str!("0005_push_retries.sql")),
    (6, "task owners", include_str!("0006_task_owners.sql")),
    (7, "replicas", include_str!("0007_replicas.sql")),
    (8, "remote tasks", include_str!("0008_remote_tasks.sql")),
];

#[derive(Debug)]
struct Embedded;

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(self) -> BoxFuture<'s, Result<Vec<Migration>, BoxDynError>> {
        Box::pin(async {
            Ok(MIGRATIONS
                .iter()
                .map(|(version, description, sql)| {
                    Migration::new(
                        *version,
                        Cow::Borrowed(*description),
                        MigrationType::Simple,
                        Cow::Borrowed(*sql),
                        false,
                    )
                })
                .collect())
        })
    }
}

/// Create `schema` if missing and bring it to the latest version. Replicas starting together
/// take turns (advisory locks); a database migrated by a newer a2a-kit is refused.
pub(super) async fn run(pool: &PgPool, schema: &str) -> Result<(), StoreError> {
    let mut tx = pool.begin().await.map_err(db)?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('a2a-kit schema ' || $1))")
        .bind(schema)
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    // `schema` was checked to be a plain identifier.
    sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\""))
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    tx.commit().await.map_err(db)?;
    let migrator = Migrator::new(Embedded)
        .await
        .map_err(|e| StoreError::Backend(format!("migrations: {e}")))?;
    migrator.run(pool).await.map_err(|e| {
        StoreError::Backend(format!(
            "could not bring schema `{schema}` to this a2a-kit's version: {e}"
        ))
    })
}
