//! SSE parsing throughput: network-sized byte chunks through the parser and the turn assembler.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skald_llm::{SseParser, StreamDelta, TurnAssembler};

const TEXT_CHUNKS: usize = 8_000;
const TOOL_CHUNKS: usize = 2_000;

/// A realistic reply: OpenAI-style text deltas (id, model, created on every chunk), a reasoning
/// prelude, then two tool calls whose arguments stream in pieces, a usage chunk and `[DONE]`.
fn stream_body() -> (Vec<u8>, usize) {
    let mut out = String::new();
    let mut n = 0;
    let head = r#""id":"chatcmpl-9xYzAbCdEf","object":"chat.completion.chunk","created":1733150000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_abc123""#;
    for i in 0..200 {
        out.push_str(&format!(
            "data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{\"reasoning_content\":\"step {i} \"}},\"finish_reason\":null}}]}}\n\n"
        ));
        n += 1;
    }
    let words =
        ["The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dög", "\\n"];
    for i in 0..TEXT_CHUNKS {
        let w = words[i % words.len()];
        out.push_str(&format!(
            "data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{w}\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"
        ));
        n += 1;
    }
    for call in 0..2 {
        out.push_str(&format!(
            "data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{call},\"id\":\"call_{call}\",\"type\":\"function\",\"function\":{{\"name\":\"write_file\",\"arguments\":\"\"}}}}]}}}}]}}\n\n"
        ));
        n += 1;
        for _ in 0..TOOL_CHUNKS / 2 {
            out.push_str(&format!(
                "data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{call},\"function\":{{\"arguments\":\"{{\\\"pa\"}}}}]}}}}]}}\n\n"
            ));
            n += 1;
        }
    }
    out.push_str(&format!("data: {{{head},\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n"));
    out.push_str(&format!("data: {{{head},\"choices\":[],\"usage\":{{\"prompt_tokens\":1200,\"completion_tokens\":9000,\"total_tokens\":10200}}}}\n\n"));
    out.push_str("data: [DONE]\n\n");
    n += 2;
    (out.into_bytes(), n)
}

fn parse(body: &[u8], read_size: usize) -> (usize, u64) {
    let mut parser = SseParser::new();
    let mut asm = TurnAssembler::new();
    let mut deltas = 0usize;
    let mut on_delta = |d: StreamDelta| {
        deltas += match d {
            StreamDelta::Content(t) | StreamDelta::Reasoning(t) => t.len(),
        }
    };
    for piece in body.chunks(read_size) {
        parser.feed(piece, &mut |ev| {
            let _ = asm.on_data(ev.data, &mut on_delta);
        });
    }
    let chunks = asm.chunks();
    let turn = asm.finish("bench", true);
    assert!(turn.is_ok_and(|t| t.tool_calls.len() == 2));
    (deltas, chunks)
}

fn bench(c: &mut Criterion) {
    let (body, n) = stream_body();
    let (_, chunks) = parse(&body, 1400);
    assert_eq!(chunks as usize, n, "every JSON chunk is parsed");
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Elements(n as u64));
    // 1400 bytes ≈ one TCP segment; 16 KiB ≈ what a busy socket read returns.
    for read_size in [1400usize, 16 * 1024] {
        group.bench_function(format!("parse_and_assemble/{read_size}B_reads"), |b| {
            b.iter(|| parse(std::hint::black_box(&body), read_size))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
