//! Approval rules: the user's standing "Always" answers, one row each.
//!
//! A rule belongs to one principal (another principal's rules are never
//! listed, matched or removed) and applies to one repository or, with no
//! repository, to all of its principal's. What it matches is stored as the
//! JSON of [`RuleMatch`], so a new kind of rule needs no migration. The SQL
//! for both stores is here, behind [`crate::Store`]'s rule methods.

use crate::postgres::{PgStore, is_unique_violation};
use crate::sqlite::SqliteStore;
use crate::{Corruption, Refused, StoreError};
use cortex_protocol::{Rule, RuleMatch};
use rusqlite::{ErrorCode, params};

/// A rule id that is already stored (whoever's it is).
fn duplicate(id: &str) -> StoreError {
    Refused::RuleExists(id.to_owned()).into()
}

fn encode(matches: &RuleMatch) -> Result<String, StoreError> {
    serde_json::to_string(matches).map_err(|source| {
        Refused::Unserializable {
            what: "rule",
            source,
        }
        .into()
    })
}

fn decode(
    id: String,
    repository: Option<String>,
    matches: &str,
    created_at: String,
) -> Result<Rule, StoreError> {
    let matches = serde_json::from_str(matches).map_err(|e| StoreError::Corrupt {
        row: format!("rule `{id}`"),
        reason: Corruption::RuleMatch(e),
    })?;
    Ok(Rule {
        id,
        repository,
        matches,
        created_at,
    })
}

impl SqliteStore {
    pub(crate) fn add_rule_sync(&self, principal: &str, rule: &Rule) -> Result<(), StoreError> {
        let matches = encode(&rule.matches)?;
        self.write(|tx| {
            let inserted = tx
                .prepare_cached(
                    "INSERT INTO rules (id, principal, repository, matches, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )?
                .execute(params![
                    rule.id,
                    principal,
                    rule.repository,
                    matches,
                    rule.created_at
                ]);
            match inserted {
                Ok(_) => Ok(()),
                Err(e) if e.sqlite_error_code() == Some(ErrorCode::ConstraintViolation) => {
                    Err(duplicate(&rule.id))
                }
                Err(e) => Err(e.into()),
            }
        })
    }

    pub(crate) fn rules_sync(&self, principal: &str) -> Result<Vec<Rule>, StoreError> {
        let conn = self.lock();
        let mut stmt = conn.prepare_cached(
            "SELECT id, repository, matches, created_at FROM rules
             WHERE principal = ?1 ORDER BY created_at, id",
        )?;
        let rows = stmt
            .query_map(params![principal], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get::<_, String>(2)?,
                    row.get(3)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(id, repository, matches, created_at)| {
                decode(id, repository, &matches, created_at)
            })
            .collect()
    }

    pub(crate) fn delete_rule_sync(&self, principal: &str, id: &str) -> Result<bool, StoreError> {
        self.write(|tx| {
            let deleted = tx
                .prepare_cached("DELETE FROM rules WHERE id = ?1 AND principal = ?2")?
                .execute(params![id, principal])?;
            Ok(deleted > 0)
        })
    }
}

impl PgStore {
    pub(crate) async fn add_rule_pg(&self, principal: &str, rule: &Rule) -> Result<(), StoreError> {
        let matches = encode(&rule.matches)?;
        let inserted = self
            .writer()
            .await?
            .execute(
                "INSERT INTO rules (id, principal, repository, matches, created_at)
                 VALUES ($1, $2, $3, $4, $5)",
                &[
                    &rule.id,
                    &principal,
                    &rule.repository,
                    &matches,
                    &rule.created_at,
                ],
            )
            .await;
        match inserted {
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => Err(duplicate(&rule.id)),
            Err(e) => Err(e.into()),
        }
    }

    pub(crate) async fn rules_pg(&self, principal: &str) -> Result<Vec<Rule>, StoreError> {
        let rows = self
            .reader()
            .await?
            .query(
                "SELECT id, repository, matches, created_at FROM rules
                 WHERE principal = $1 ORDER BY created_at, id",
                &[&principal],
            )
            .await?;
        rows.iter()
            .map(|row| {
                let matches: String = row.get(2);
                decode(row.get(0), row.get(1), &matches, row.get(3))
            })
            .collect()
    }

    pub(crate) async fn delete_rule_pg(
        &self,
        principal: &str,
        id: &str,
    ) -> Result<bool, StoreError> {
        let deleted = self
            .writer()
            .await?
            .execute(
                "DELETE FROM rules WHERE id = $1 AND principal = $2",
                &[&id, &principal],
            )
            .await?;
        Ok(deleted > 0)
    }
}
