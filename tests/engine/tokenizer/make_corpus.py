#!/usr/bin/env python3
"""Writes corpus.jsonl: one JSON string per line, generated from a fixed seed.

Run: python3 tests/engine/tokenizer/make_corpus.py > tests/engine/tokenizer/corpus.jsonl
The output is committed; re-running with the same seed reproduces it.
"""
import json
import random
import sys
import unicodedata

SEED = 20260512
rng = random.Random(SEED)

WORDS = ("the quick brown fox jumps over lazy dog tokenizer cache proxy request seed model "
         "deterministic stream decode encode byte pair merge rank vocabulary international "
         "naïve café résumé coöperate façade Zürich São Paulo Straße über déjà vu hello world "
         "It's don't we'll they've I'm you'd she's CAN'T WON'T IT'S WE'LL THEY'RE I'D "
         "antidisestablishmentarianism supercalifragilistic GPT-2 Qwen3 Llama-2 e-mail "
         "U.S.A. Mr. Dr. etc. 3.14159 1,000,000 42nd 2026-12-02 10:30am $19.99 50% #hashtag @user").split()
CJK = ["你好，世界！", "我们今天去公园散步。", "机器学习是人工智能的一个分支", "東京都渋谷区", "こんにちは、元気ですか？",
       "カタカナとひらがなと漢字", "안녕하세요 세계", "한국어 토크나이저 테스트입니다", "繁體中文與简体中文", "【注意】「引用」『二重』",
       "一二三四五六七八九十", "𠀀𠀁𪚥𩸽", "ｆｕｌｌｗｉｄｔｈ　ＡＢＣ１２３"]
EMOJI = ["😀", "😂🤣", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇺🇸🇯🇵🇩🇪", "❤️", "🧑🏿‍💻", "👩‍❤️‍💋‍👨", "🤷‍♀️", "✨🎉🔥",
         "1️⃣#️⃣", "🫠🫡", "☃", "⌚⏰", "🦀 Rust", "🐍 Python"]
COMBINING = ["café", "naïve", "Ångström", "Việt Nam", "Crème brûlée", "Ελληνικά ά", "Ünïcödé", "ñandú",
             "ǅemal", "x\u0301\u0302\u0303", "a\u0308\u0304", "\u0915\u094d\u0937", "Å", "ﬁ ligature", "Ⅻ roman"]
RTL = ["مرحبا بالعالم", "السلام عليكم ورحمة الله", "שלום עולם", "עברית מימין לשמאל", "English then عربي then English",
       "فارسی: سلام دنیا", "اردو زبان", "٠١٢٣٤٥٦٧٨٩", "\u200fRLM mark", "\u202eRLO override\u202c"]
CODE = ['def f(x):\n    return x * 2\n', 'int main() { return 0; }', 'for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}',
        '{"key": [1, 2, 3], "nested": {"a": null}}', 'SELECT * FROM users WHERE id = 42;', '#include <vector>\n',
        'const x = () => { console.log("hi"); };', 'if __name__ == "__main__":\n    main()', '<div class="a">text</div>',
        '$ ls -la | grep "*.cpp" && echo done', 'x+=1;y-=2;z*=3;w/=4;', 'fn main() -> Result<(), Box<dyn Error>> {}',
        '    indented    code    ', 'a_b_c __init__ __dunder__', 'https://example.com/path?q=1&r=2#frag',
        'regex: ^[a-z]+\\d{2,}$', '// comment\n/* block */', '    \n    \n']
SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<s>", "</s>", "<unk>", "<think>", "</think>",
           "<|im_start|>user\nhello<|im_end|>\n", "<|im_start|>assistant\n<think>\n\n</think>\n\n",
           "<|im_start", "im_end|>", "<s", "< s>", "<<s>>", "<s></s>", "[INST] hi [/INST]", "<|fim_prefix|>",
           "<tool_call>", "</tool_call>", "<|vision_start|>", "<|endoftext|><|endoftext|>"]
CONTRACTIONS = ["'S", "'s", "'T", "'LL", "'ll", "'Re", "'VE", "'m", "'D", "'d", "''", "'x", "'", "'''s"]
WS = [" ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", " \n ", "\t\t", "\u00a0", "\u3000", "\u2003", "\u2028", "\r", "\f", "\v"]
PUNCT = list(".,;:!?-—–…()[]{}\"'`~@#$%^&*_+=|\\/<>") + ["...", "?!", "--", "->", "=>", "::", "**", "```"]


def digits():
    return "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 40)))


def random_codepoints():
    blocks = [(0x20, 0x7E), (0xA1, 0x17F), (0x370, 0x3FF), (0x400, 0x4FF), (0x530, 0x58F), (0x900, 0x97F),
              (0xE00, 0xE5B), (0x10A0, 0x10FF), (0x3040, 0x30FF), (0x4E00, 0x9FA5), (0xAC00, 0xD7A3),
              (0x1F300, 0x1F5FF), (0x1F600, 0x1F64F), (0x2200, 0x22FF), (0x2500, 0x257F), (0x1, 0x1F)]
    out = []
    for _ in range(rng.randint(1, 20)):
        lo, hi = rng.choice(blocks)
        cp = rng.randint(lo, hi)
        if unicodedata.category(chr(cp)) == "Cn":
            continue
        out.append(chr(cp))
    return "".join(out)


def prose():
    n = rng.randint(3, 30)
    words = [rng.choice(WORDS) for _ in range(n)]
    s = " ".join(words)
    if rng.random() < 0.5:
        s = s[0].upper() + s[1:] + rng.choice([".", "!", "?", "", "..."])
    return s


def fragment():
    kind = rng.randint(0, 11)
    if kind == 0: return prose()
    if kind == 1: return rng.choice(CJK)
    if kind == 2: return rng.choice(EMOJI)
    if kind == 3:
        c = rng.choice(COMBINING)
        return unicodedata.normalize(rng.choice(["NFC", "NFD", "NFKD"]), c) if rng.random() < 0.7 else c
    if kind == 4: return rng.choice(RTL)
    if kind == 5: return rng.choice(CODE)
    if kind == 6: return rng.choice(SPECIAL)
    if kind == 7: return rng.choice(WORDS) + rng.choice(CONTRACTIONS)
    if kind == 8: return rng.choice(WS) * rng.randint(1, 12)
    if kind == 9: return digits()
    if kind == 10: return "".join(rng.choice(PUNCT) for _ in range(rng.randint(1, 6)))
    return random_codepoints()


def line():
    parts = [fragment() for _ in range(rng.randint(1, 8))]
    sep = rng.choice(["", " ", "\n", "", " "])
    return sep.join(parts)


def main():
    fixed = [
        "", " ", "  ", "\n", "\r\n", "\t", "a", "Hello world", " Hello world", "Hello  world",
        "Hello, world! How are you?", "IT'S WE'LL THEY'RE I'D YOU'VE SHE'S", "it's we'll they're",
        "x" * 300, " " * 100, "1" * 100, "1234567890" * 20, "\n" * 50, "\r\n" * 20, "\t\n \t\n",
        "a" + " " * 17 + "b", "   leading and trailing   ", "😀" * 30, "👨‍👩‍👧‍👦👨‍👩‍👧‍👦",
        unicodedata.normalize("NFD", "Crème brûlée à la café"), unicodedata.normalize("NFC", "Crème brûlée à la café"),
        "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
        "<s>[INST] Hello [/INST]</s>", "<s> <s>  <s>", "text<s>text</s>text", "<|endoftext|>", "<|endoftext|> hello",
        "\u0000\u0001\u007f", "e\u0301", "\u00e9", "ſ", "Kelvin \u212a", "\ufb01", "\u2126 \u03a9",
    ]
    lines = fixed[:]
    while len(lines) < 2200:
        lines.append(line())
    # A few long documents (multi-KB) to exercise long words and the cache.
    for _ in range(10):
        lines.append("\n".join(line() for _ in range(60)))
    for s in lines:
        sys.stdout.write(json.dumps(s, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
