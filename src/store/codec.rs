//! Shared plumbing of the table modules: query helpers that turn rows into typed values,
//! JSON and embedding column codecs, and the atomic-write scope.
//!
//! Row decoding is two-step on purpose: `SQLite` hands back primitives (`String`, `Vec<u8>`) and
//! the decoders here turn them into domain values, so a bad JSON column becomes a
//! [`StoreError::Corrupt`] naming the table, column and row instead of a generic `SQLite` error.

use rusqlite::types::FromSql;
use rusqlite::{Connection, Params, Row};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::StoreError;

/// The timestamp `SQLite` writes for `created_at` / `updated_at`: RFC 3339, UTC, milliseconds.
///
/// The database clock is used rather than the caller's so every row of one statement shares a
/// timestamp and no caller has to thread a clock through for bookkeeping columns.
pub(crate) const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// Runs `sql` and decodes every row with `decode`.
pub(crate) fn query_all<T>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    context: &str,
    mut decode: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(|e| StoreError::sqlite(context, e))?;
    let mut rows = stmt
        .query(params)
        .map_err(|e| StoreError::sqlite(context, e))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(|e| StoreError::sqlite(context, e))? {
        out.push(decode(row)?);
    }
    Ok(out)
}

/// Runs `sql` and decodes the first row, if any.
pub(crate) fn query_opt<T>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    context: &str,
    decode: impl FnOnce(&Row<'_>) -> Result<T, StoreError>,
) -> Result<Option<T>, StoreError> {
    let mut stmt = conn
        .prepare_cached(sql)
        .map_err(|e| StoreError::sqlite(context, e))?;
    let mut rows = stmt
        .query(params)
        .map_err(|e| StoreError::sqlite(context, e))?;
    match rows.next().map_err(|e| StoreError::sqlite(context, e))? {
        Some(row) => decode(row).map(Some),
        None => Ok(None),
    }
}

/// Executes one statement through the statement cache and returns the changed row count.
pub(crate) fn exec(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    context: &str,
) -> Result<usize, StoreError> {
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.execute(params))
        .map_err(|e| StoreError::sqlite(context, e))
}

/// Reads a column by name.
pub(crate) fn col<T: FromSql>(row: &Row<'_>, name: &str) -> Result<T, StoreError> {
    row.get(name)
        .map_err(|e| StoreError::sqlite(format!("reading column {name}"), e))
}

/// Reads a non-negative integer column (counts, tokens, milliseconds) as `u64`.
///
/// rusqlite maps only signed integers without its `fallible_uint` feature; the schema's CHECK
/// constraints keep these columns non-negative, so a negative value means a damaged file.
pub(crate) fn count_col(row: &Row<'_>, name: &str) -> Result<u64, StoreError> {
    let value: i64 = col(row, name)?;
    u64::try_from(value).map_err(|_| {
        StoreError::corrupt(format!("column {name}"), &format!("negative count {value}"))
    })
}

/// A `u64` counter as `SQLite`'s `i64`, saturating: no real token count or latency gets near.
pub(crate) fn count_param(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Reads a JSON text column into `T`; `what` names the table, column and row for the error.
pub(crate) fn json_col<T: DeserializeOwned>(
    row: &Row<'_>,
    name: &str,
    what: impl FnOnce() -> String,
) -> Result<T, StoreError> {
    let text: String = col(row, name)?;
    serde_json::from_str(&text).map_err(|e| StoreError::corrupt(what(), &e))
}

/// Serializes a value for a JSON text column.
pub(crate) fn to_json<T: Serialize + ?Sized>(value: &T, what: &str) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::corrupt(what, &e))
}

/// Encodes an embedding as little-endian `f32`s, 4 bytes each (bit-exact, NaN payloads too).
pub(crate) fn embedding_to_blob(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Decodes a nullable embedding BLOB column.
pub(crate) fn embedding_col(
    row: &Row<'_>,
    name: &str,
    what: impl FnOnce() -> String,
) -> Result<Option<Vec<f32>>, StoreError> {
    let Some(bytes): Option<Vec<u8>> = col(row, name)? else {
        return Ok(None);
    };
    if bytes.len() % 4 != 0 {
        return Err(StoreError::corrupt(
            what(),
            &format!(
                "embedding of {} bytes is not a whole number of f32s",
                bytes.len()
            ),
        ));
    }
    bytes
        .chunks_exact(4)
        .map(|chunk| <[u8; 4]>::try_from(chunk).map(f32::from_le_bytes))
        .collect::<Result<Vec<f32>, _>>()
        .map(Some)
        .map_err(|e| StoreError::corrupt(what(), &e))
}

/// Runs `f` so that all of its writes land or none do.
///
/// Outside a transaction this opens `BEGIN IMMEDIATE` (taking the write lock up front, so a
/// concurrent writer waits on the busy timeout instead of failing mid-way); inside one (a
/// [`Tx`](super::Tx)) it uses a savepoint, so a failed batch is undone without aborting the
/// caller's transaction. Deferred foreign keys are checked at the outermost commit.
pub(crate) fn atomic<T>(
    conn: &Connection,
    context: &str,
    f: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let scope = Scope::begin(conn, context)?;
    let value = f(conn)?;
    scope.commit(context)?;
    Ok(value)
}

/// An open transaction or savepoint that rolls back when dropped uncommitted (on error or
/// unwinding), so a failed batch never leaves the connection inside a dangling transaction.
struct Scope<'c> {
    conn: &'c Connection,
    nested: bool,
    done: bool,
}

impl<'c> Scope<'c> {
    fn begin(conn: &'c Connection, context: &str) -> Result<Self, StoreError> {
        let nested = !conn.is_autocommit();
        let sql = if nested {
            "SAVEPOINT store_write"
        } else {
            "BEGIN IMMEDIATE"
        };
        conn.execute_batch(sql)
            .map_err(|e| StoreError::sqlite(format!("starting a transaction for {context}"), e))?;
        Ok(Self {
            conn,
            nested,
            done: false,
        })
    }

    fn commit(mut self, context: &str) -> Result<(), StoreError> {
        let sql = if self.nested {
            "RELEASE store_write"
        } else {
            "COMMIT"
        };
        self.conn
            .execute_batch(sql)
            .map_err(|e| StoreError::sqlite(format!("committing {context}"), e))?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let sql = if self.nested {
            "ROLLBACK TO store_write; RELEASE store_write"
        } else {
            "ROLLBACK"
        };
        // Nothing useful to do if the rollback itself fails: `SQLite` has then already rolled
        // back (the usual cause) and the original error is what the caller needs to see.
        let _ = self.conn.execute_batch(sql);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;

    fn conn() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (x INTEGER PRIMARY KEY)")
            .unwrap();
        conn
    }

    fn count(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn embedding_blob_is_little_endian_and_bit_exact() {
        let values = [
            1.0_f32,
            -0.0,
            f32::MIN_POSITIVE / 2.0,
            f32::from_bits(0x7fc0_1234),
        ];
        let blob = embedding_to_blob(&values);
        assert_eq!(blob.len(), 16);
        assert_eq!(&blob[..4], &1.0_f32.to_le_bytes());
        let conn = Connection::open_in_memory().unwrap();
        let back = conn
            .query_row("SELECT ?1 AS e", [&blob], |row| {
                Ok(embedding_col(row, "e", String::new))
            })
            .unwrap()
            .unwrap()
            .unwrap();
        let bits: Vec<u32> = back.iter().map(|v| v.to_bits()).collect();
        let want: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits, want);
    }

    #[test]
    fn torn_embedding_is_corrupt() {
        let conn = Connection::open_in_memory().unwrap();
        let err = conn
            .query_row("SELECT x'010203' AS e", [], |row| {
                Ok(embedding_col(row, "e", || {
                    "kg_nodes.embedding of n1".into()
                }))
            })
            .unwrap()
            .unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
        assert!(err.to_string().contains("kg_nodes.embedding of n1"));
    }

    #[test]
    fn atomic_rolls_back_a_failed_batch() {
        let conn = conn();
        let result: Result<(), StoreError> = atomic(&conn, "test", |c| {
            exec(c, "INSERT INTO t VALUES (1)", [], "first")?;
            exec(c, "INSERT INTO t VALUES (1)", [], "duplicate")?;
            Ok(())
        });
        assert!(result.is_err());
        assert_eq!(count(&conn), 0);
        assert!(conn.is_autocommit(), "no transaction left open");
    }

    #[test]
    fn nested_atomic_undoes_only_its_own_writes() {
        let mut conn = conn();
        let tx = conn.transaction().unwrap();
        exec(&tx, "INSERT INTO t VALUES (1)", [], "outer").unwrap();
        let inner: Result<(), StoreError> = atomic(&tx, "inner", |c| {
            exec(c, "INSERT INTO t VALUES (2)", [], "inner")?;
            exec(c, "INSERT INTO t VALUES (2)", [], "duplicate")?;
            Ok(())
        });
        assert!(inner.is_err());
        tx.commit().unwrap();
        assert_eq!(count(&conn), 1);
    }
}
