# wordfreq: dict and str processing - generated text split, normalised and counted, bigrams, Counter.most_common, line wrapping.
# bench: n = 3000
from collections import Counter

WORDS = (
    "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "timer", "block",
    "actor", "ledger", "python", "metered", "cycle", "chain", "node", "value", "state", "root",
    "hash", "proof", "vote", "commit", "round", "height", "fee", "tip", "basefee", "deposit",
)
PUNCT = ".,;:!?"


def make_text(n, seed):
    words = []
    for _ in range(n):
        seed = (seed * 1103515245 + 12345) % 2147483648
        word = WORDS[(seed >> 8) % len(WORDS)]
        if seed % 7 == 0:
            word = word.capitalize()
        elif seed % 13 == 0:
            word = word.upper()
        if seed % 5 == 0:
            word = word + PUNCT[seed % len(PUNCT)]
        words.append(word)
    return " ".join(words)


def normalise(raw):
    return raw.strip(PUNCT).lower()


def count_words(text):
    counts = {}
    for raw in text.split():
        word = normalise(raw)
        counts[word] = counts.get(word, 0) + 1
    return counts


def bigrams(words):
    pairs = {}
    for a, b in zip(words, words[1:]):
        key = a + " " + b
        if key in pairs:
            pairs[key] += 1
        else:
            pairs[key] = 1
    return pairs


def wrap(words, width):
    lines = []
    line = ""
    for word in words:
        if len(line) + len(word) + 1 > width:
            lines.append(line)
            line = word
        elif line:
            line = line + " " + word
        else:
            line = word
    if line:
        lines.append(line)
    return lines


@actor
class Actor:
    def run(self, n):
        text = make_text(n, 42)
        counts = count_words(text)
        words = [normalise(w) for w in text.split()]
        pairs = bigrams(words)
        top = Counter(counts).most_common(5)
        letters = Counter(c for c in text.lower() if c.isalpha())
        lines = wrap(words, 60)
        report = "; ".join(f"{w}={c}" for w, c in top)
        best_pair = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        title = " ".join(w.title() for w in words[:8])
        return [report, best_pair[0], best_pair[1], len(lines), max(len(l) for l in lines),
                letters.most_common(3), title, text.count("Fox"), text.find("DOG")]
