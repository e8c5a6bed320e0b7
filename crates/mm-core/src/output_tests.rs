use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::*;
use crate::process::tests::{sh, spec};
use crate::process::{ProcessOutcome, ProcessSpec, run_process};

async fn capture_into(spec: &ProcessSpec, out: &mut Output) -> ProcessOutcome {
    let mut sink = |chunk: &[u8]| out.write(chunk);
    run_process(spec, &CancellationToken::new(), &mut sink)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn capture(spec: &ProcessSpec, max: usize) -> Captured {
    let mut out = Output::new(max);
    capture_into(spec, &mut out).await;
    out.finish()
}

#[test]
fn text_under_the_cap_is_kept_whole_and_counted() {
    let mut out = Output::new(100);
    out.write_str("one ");
    out.write(b"");
    out.write_str("two");
    assert_eq!(out.total(), 7);
    assert_eq!(
        out.finish(),
        Captured {
            text: "one two".into(),
            full_output: None,
            total: 7
        }
    );
}

#[test]
fn text_over_the_cap_keeps_head_and_tail_and_is_saved() {
    let mut out = Output::new(10);
    for _ in 0..10 {
        out.write_str("abcdefghij");
    }
    let captured = out.finish();
    let path = captured
        .full_output
        .clone()
        .unwrap_or_else(|| panic!("not saved"));
    let saved = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    assert_eq!(saved, "abcdefghij".repeat(10));
    assert_eq!(
        captured.text,
        format!(
            "abcde\n[… 90 bytes cut; full output (100 bytes) saved to {} …]\nfghij",
            path.display()
        )
    );
}

#[test]
fn the_echo_sees_text_until_its_cap() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let mut out = Output::with_echo(
        6,
        Box::new(move |chunk: &[u8]| {
            if let Ok(mut v) = sink.lock() {
                v.push(String::from_utf8_lossy(chunk).into_owned());
            }
        }),
    );
    out.write_str("abc");
    out.write_str("defgh");
    out.write_str("ijk");
    let _ = out.finish().full_output.map(std::fs::remove_file);
    let cut = String::from_utf8_lossy(ECHO_CUT);
    assert_eq!(
        seen.lock().map(|v| v.clone()).unwrap_or_default(),
        vec!["abc".to_string(), format!("def{cut}")]
    );
}

#[tokio::test]
async fn the_echo_is_capped_and_the_file_has_every_byte() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let echo: Echo = Box::new(move |chunk: &[u8]| {
        if let Ok(mut v) = sink.lock() {
            v.extend_from_slice(chunk);
        }
    });
    let mut out = Output::with_echo(100, echo);
    capture_into(&sh("seq 1 5000"), &mut out).await;
    let outcome = out.finish();
    let expected: String = (1..=5000).map(|i| format!("{i}\n")).collect();
    // The echo shows the first 100 bytes, then says it stops; the file has everything.
    let mut shown = expected.as_bytes()[..100].to_vec();
    shown.extend_from_slice(ECHO_CUT);
    assert_eq!(seen.lock().map(|v| v.clone()).unwrap_or_default(), shown);
    if let Some(path) = outcome.full_output {
        assert_eq!(std::fs::read_to_string(&path).unwrap_or_default(), expected);
        let _ = std::fs::remove_file(path);
    } else {
        panic!("not saved");
    }
}

#[tokio::test]
async fn output_under_the_cap_is_kept_whole() {
    let outcome = capture(&sh("seq 1 100000"), 10_000_000).await;
    let expected: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    assert!(
        outcome.text == expected,
        "{} bytes of {}",
        outcome.text.len(),
        expected.len()
    );
    assert_eq!(outcome.full_output, None);
}

#[tokio::test]
async fn small_overflow_keeps_head_and_tail() {
    let outcome = capture(&sh("seq 1 1000"), 20).await;
    let path = outcome
        .full_output
        .clone()
        .unwrap_or_else(|| panic!("not saved"));
    let total: usize = (1..=1000).map(|i: i32| i.to_string().len() + 1).sum();
    assert_eq!(
        outcome.text,
        format!(
            "1\n2\n3\n4\n5\n[… {} bytes cut; full output ({total} bytes) saved to {} …]\n\n999\n1000\n",
            total - 20,
            path.display()
        )
    );
    assert!(path.starts_with(std::env::temp_dir().join("mm-output")));
    assert!(path.file_name().is_some_and(|n| {
        n.to_string_lossy()
            .starts_with(&format!("mm-output-{}-", std::process::id()))
    }));
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn a_gigabyte_is_streamed_to_a_file_and_memory_stays_bounded() {
    let mut spec = spec("head", &["-c", "1000000000", "/dev/zero"]);
    spec.timeout = Duration::from_secs(120);
    let mut out = Output::new(8000);
    let ran = capture_into(&spec, &mut out).await;
    let outcome = out.finish();
    let path = outcome
        .full_output
        .clone()
        .unwrap_or_else(|| panic!("not saved"));
    let size = std::fs::metadata(&path).map(|m| m.len());
    let _ = std::fs::remove_file(&path);
    assert_eq!(size.ok(), Some(1_000_000_000));
    assert_eq!(ran.exit_code, Some(0));
    let note = format!(
        "\n[… 999992000 bytes cut; full output (1000000000 bytes) saved to {} …]\n",
        path.display()
    );
    assert!(
        outcome.text.contains(&note),
        "{:?}",
        &outcome.text[3990..4200]
    );
    assert_eq!(outcome.text.len(), 8000 + note.len());
}

#[tokio::test]
async fn truncation_never_splits_a_character() {
    // 3000 × "é" (2 bytes each); an odd cap puts both cut points inside a character.
    let spec = sh("i=0; while [ $i -lt 3000 ]; do printf 'é'; i=$((i+1)); done");
    let outcome = capture(&spec, 102).await;
    if let Some(path) = &outcome.full_output {
        let _ = std::fs::remove_file(path);
    }
    assert!(!outcome.text.contains('\u{FFFD}'), "{}", outcome.text);
    let (head, rest) = outcome.text.split_once('\n').unwrap_or_default();
    assert_eq!(head, "é".repeat(25));
    assert!(rest.ends_with(&format!("…]\n{}", "é".repeat(25))), "{rest}");
}
