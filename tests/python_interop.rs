//! Byte-for-byte interop with CairnDB's encoding: every value here is written by fencepost (a doc
//! on the memory store, read back raw through the objects layer) and encoded by CPython's
//! `json.dumps(v, sort_keys=True, separators=(",", ":"))`, and the bytes must match.
//! Needs `python3` on PATH (every machine of this kind has it); fails loudly otherwise.

use std::io::Write;
use std::process::{Command, Stdio};

use std::sync::Arc;

use fencepost::store::MemoryStore;
use fencepost::{Fencepost, Options, UpdateOptions};
use serde_json::{Value, json};

fn python_encode(values: &[Value]) -> Vec<String> {
    let script = r#"
import json, sys
for line in sys.stdin:
    v = json.loads(line)
    print(json.dumps(v, sort_keys=True, separators=(",", ":")))
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 must be on PATH for the interop test");
    {
        let stdin = child.stdin.as_mut().unwrap();
        for v in values {
            writeln!(stdin, "{v}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect()
}

#[test]
fn canonical_json_matches_cpython_byte_for_byte() {
    let values = vec![
        json!(null),
        json!(true),
        json!(0),
        json!(-7),
        json!(9007199254740993u64),
        json!("plain"),
        json!("quote \" backslash \\ slash / tab \t newline \n cr \r bell \u{7} del \u{7f}"),
        json!("é ü ß ñ 中文 ключ"),
        json!("astral 😀 𝄞 🏳️‍🌈"),
        json!({"b": 1, "a": 2, "B": 3, "_": 4, "aa": 5, "a b": 6}),
        json!({"\u{FF61}": 1, "\u{1F600}": 2, "\u{E9}": 3, "z": 4}),
        json!({"deadline_at": "2026-01-01T00:00:00.000000Z", "epoch": 3, "holder": "h", "state": {"done": ["x", "y"], "n": null}}),
        json!([[], {}, [[{}]], {"k": [1, [2, [3]]]}]),
        json!(1.5),
        json!(0.1),
        json!(1e16),
        json!(1.5e-5),
        json!(-0.0001),
        json!(123456789.125),
        json!(1e300),
        json!({"mixed": [1, 2.5, "three", false, null, {"x": -1e-7}]}),
    ];
    let python = python_encode(&values);
    assert_eq!(python.len(), values.len());
    let db = Fencepost::new(Arc::new(MemoryStore::new()), Options::default()).unwrap();
    for (i, (v, py)) in values.iter().zip(&python).enumerate() {
        let key = format!("interop/{i}");
        let stored = futures::executor::block_on(async {
            let options = UpdateOptions { create: Some(v.clone()), max_attempts: 1, ..Default::default() };
            db.doc(&key)?.update_with(options, |_| Ok(v.clone())).await?;
            db.objects().get(&key).await
        });
        let ours = String::from_utf8(stored.unwrap().expect("just written").body).unwrap();
        assert_eq!(&ours, py, "value {v}");
    }
}
