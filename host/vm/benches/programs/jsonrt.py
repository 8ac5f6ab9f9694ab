# jsonrt: json round trips - nested records dumped (sorted keys), loaded back, queried, re-encoded one by one.
# bench: n = 1000
import json


def make_doc(i):
    return {
        "id": i,
        "name": "item-" + str(i),
        "tags": ["t" + str(i % 7), "x" + str(i % 3), "common"],
        "price": i * 37 % 1000,
        "stock": [i % 4, i % 9, i % 11],
        "meta": {"ok": i % 2 == 0, "parent": None if i % 5 else i // 5, "note": "caf\u00e9 #" + str(i)},
    }


@actor
class Actor:
    def run(self, n):
        docs = [make_doc(i) for i in range(n)]
        text = json.dumps(docs, sort_keys=True, separators=(",", ":"))
        back = json.loads(text)
        total = 0
        for d in back:
            if d["meta"]["ok"]:
                total += d["price"] * sum(d["stock"])
        by_tag = {}
        for d in back:
            for tag in d["tags"]:
                by_tag[tag] = by_tag.get(tag, 0) + 1
        sizes = 0
        for d in back:
            d["price"] = d["price"] + 1
            sizes += len(json.dumps(d, sort_keys=True))
        again = json.dumps(back, sort_keys=True, separators=(",", ":"))
        small = json.loads(json.dumps(by_tag, sort_keys=True))
        return [len(text), len(again), total, sizes, sorted(small.items())[:4], back[n // 2]["meta"]["note"]]
