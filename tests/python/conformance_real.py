"""Everyday conformance programs (issue #30): the kind of small programs
people actually write — ledgers, order books, reports, parsers, graphs,
caches — using the constructs the issue asks the actor VM to accept
(module-level tables and caches, augmented assignment to any target,
starred loop targets, nested format specs, ``__slots__``, function and
exception introspection, identity-hashed objects, deep recursion, …).

Same format as ``PROGRAMS`` in ``test_conformance.py``, which runs them: each
defines ``run()`` at module level and returns ints, str, bytes, bool, None,
lists, tuples and dicts only. ``PENDING`` names the programs the VM refuses
today for one of the issue's constructs (expected failures, not strict);
``FOUND`` names those that fail for another reason.
"""

# Module- and class-level tables, registries, caches and config objects, read
# and mutated during the call.
MODULE_STATE = {
    "fee_table_module_dict": """
        FEES = {"transfer": 2, "mint": 5, "burn": 1}
        DEFAULT_FEE = 3

        def fee_for(op):
            return FEES.get(op, DEFAULT_FEE)

        def run():
            ops = ["transfer", "mint", "transfer", "swap", "burn"]
            charged = [(op, fee_for(op)) for op in ops]
            return [charged, sum(fee for _, fee in charged)]
    """,
    "stopwords_module_list_and_set": """
        STOP_WORDS = {"the", "a", "of", "and", "to", "in"}
        KEYWORDS = ["timer", "actor", "block"]

        def run():
            text = "the actor of the block and the timer in a block to the actor"
            words = [w for w in text.split() if w not in STOP_WORDS]
            counts = {}
            for w in words:
                counts[w] = counts.get(w, 0) + 1
            return [words, counts, [k for k in KEYWORDS if counts.get(k, 0) > 1]]
    """,
    "acl_allowed_roles_module_set": """
        ALLOWED = {"admin", "minter"}
        USERS = {"ann": "admin", "bob": "viewer", "cy": "minter"}

        class Forbidden(Exception):
            pass

        def mint(user, amount):
            if USERS.get(user) not in ALLOWED:
                raise Forbidden(f"{user} may not mint")
            return amount

        def run():
            out = []
            for user in ["ann", "bob", "cy", "dan"]:
                try:
                    out.append(mint(user, 10))
                except Forbidden as e:
                    out.append(str(e))
            return out
    """,
    "shop_prices_class_table": """
        class Shop:
            PRICES = {"apple": 3, "pear": 4, "fig": 9}
            DISCOUNTS = {"fig": 2}

            def total(self, basket):
                cost = 0
                for item, qty in basket.items():
                    unit = self.PRICES[item] - self.DISCOUNTS.get(item, 0)
                    cost += unit * qty
                return cost

        def run():
            shop = Shop()
            return [shop.total({"apple": 2, "fig": 3}), shop.total({}), sorted(Shop.PRICES)]
    """,
    "order_state_machine_transition_table": """
        TRANSITIONS = {
            ("new", "pay"): "paid",
            ("paid", "ship"): "shipped",
            ("shipped", "deliver"): "delivered",
            ("new", "cancel"): "cancelled",
            ("paid", "cancel"): "refunded",
        }

        def advance(state, event):
            try:
                return TRANSITIONS[(state, event)]
            except KeyError:
                raise ValueError(f"cannot {event} when {state}") from None

        def run():
            history, state, errors = ["new"], "new", []
            for event in ["pay", "deliver", "ship", "deliver", "cancel"]:
                try:
                    state = advance(state, event)
                    history.append(state)
                except ValueError as e:
                    errors.append(str(e))
            return [history, errors]
    """,
    "handler_registry_class_decorator": """
        HANDLERS = {}

        def handles(kind):
            def register(cls):
                HANDLERS[kind] = cls
                return cls
            return register

        @handles("deposit")
        class Deposit:
            def apply(self, balance, amount):
                return balance + amount

        @handles("withdraw")
        class Withdraw:
            def apply(self, balance, amount):
                if amount > balance:
                    raise ValueError("insufficient")
                return balance - amount

        def run():
            balance = 0
            for kind, amount in [("deposit", 50), ("withdraw", 20), ("withdraw", 99), ("deposit", 5)]:
                try:
                    balance = HANDLERS[kind]().apply(balance, amount)
                except ValueError:
                    pass
            return [balance, sorted(HANDLERS)]
    """,
    "command_registry_function_decorator": """
        COMMANDS = {}

        def command(name):
            def register(fn):
                COMMANDS[name] = fn
                return fn
            return register

        @command("add")
        def add(stack):
            stack.append(stack.pop() + stack.pop())

        @command("dup")
        def dup(stack):
            stack.append(stack[-1])

        @command("mul")
        def mul(stack):
            stack.append(stack.pop() * stack.pop())

        def run():
            stack = []
            for tok in "3 4 add dup mul 2 mul".split():
                if tok in COMMANDS:
                    COMMANDS[tok](stack)
                else:
                    stack.append(int(tok))
            return [stack, list(COMMANDS)]
    """,
    "memoise_decorator_closure_dict": """
        def memoise(fn):
            cache = {}

            def wrapper(n):
                if n not in cache:
                    cache[n] = fn(n)
                return cache[n]
            return wrapper

        @memoise
        def ways(n):
            # staircase with steps of 1, 2 or 3
            if n < 0:
                return 0
            if n == 0:
                return 1
            return ways(n - 1) + ways(n - 2) + ways(n - 3)

        def run():
            return [ways(10), ways(60), ways(3)]
    """,
    "memoise_decorator_counts_misses": """
        MISSES = []

        def cached(fn):
            table = {}

            def lookup(a, b):
                key = (a, b)
                if key not in table:
                    MISSES.append(key)
                    table[key] = fn(a, b)
                return table[key]
            return lookup

        @cached
        def grid_paths(rows, cols):
            if rows == 0 or cols == 0:
                return 1
            return grid_paths(rows - 1, cols) + grid_paths(rows, cols - 1)

        def run():
            return [grid_paths(8, 8), len(MISSES), MISSES[:3]]
    """,
    "config_object_module_instance": """
        class Config:
            def __init__(self):
                self.decimals = 2
                self.symbol = "TOK"
                self.max_supply = 10_000

        CONFIG = Config()

        def fmt(amount):
            scale = 10 ** CONFIG.decimals
            whole, frac = divmod(amount, scale)
            return f"{whole}." + str(frac).zfill(CONFIG.decimals) + " " + CONFIG.symbol

        def run():
            return [fmt(12345), fmt(7), fmt(CONFIG.max_supply)]
    """,
    "config_instance_mutated_in_call": """
        class Settings:
            def __init__(self):
                self.limit = 3
                self.seen = []

        SETTINGS = Settings()

        def accept(item):
            if len(SETTINGS.seen) >= SETTINGS.limit:
                return False
            SETTINGS.seen.append(item)
            return True

        def run():
            SETTINGS.limit = 2
            return [[accept(x) for x in "abc"], SETTINGS.seen, SETTINGS.limit]
    """,
    "words_list_appended_in_call": """
        WORDS = ["alpha", "beta"]

        def run():
            WORDS.append("gamma")
            WORDS.extend(["delta"])
            WORDS.sort(key=len)
            return WORDS
    """,
    "prime_cache_filled_during_call": """
        import math

        PRIME_CACHE = {}

        def is_prime(n):
            if n in PRIME_CACHE:
                return PRIME_CACHE[n]
            result = n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1))
            PRIME_CACHE[n] = result
            return result

        def run():
            primes = [n for n in range(40) if is_prime(n)]
            again = [n for n in range(30, 50) if is_prime(n)]
            return [primes, again, len(PRIME_CACHE)]
    """,
    "class_stock_table_mutated": """
        class Warehouse:
            STOCK = {"bolt": 10, "nut": 4}

            def take(self, item, qty):
                if self.STOCK.get(item, 0) < qty:
                    return False
                self.STOCK[item] -= qty
                return True

        def run():
            w = Warehouse()
            results = [w.take("bolt", 3), w.take("nut", 5), w.take("bolt", 7), w.take("bolt", 1)]
            return [results, Warehouse.STOCK]
    """,
    "mutable_default_argument_gotcha": """
        def tag(word, seen=[]):
            seen.append(word)
            return list(seen)

        def run():
            return [tag("a"), tag("b"), tag("c", []), tag("d")]
    """,
    "seen_module_set_dedupe": """
        SEEN = set()

        def first_time(event_id):
            if event_id in SEEN:
                return False
            SEEN.add(event_id)
            return True

        def run():
            flags = [first_time(e) for e in [3, 1, 3, 2, 1, 4]]
            return [flags, sorted(SEEN)]
    """,
    "log_levels_class_list": """
        class Logger:
            LEVELS = ["debug", "info", "warn", "error"]

            def __init__(self, level):
                self.threshold = self.LEVELS.index(level)
                self.lines = []

            def log(self, level, msg):
                if self.LEVELS.index(level) >= self.threshold:
                    self.lines.append(f"[{level.upper()}] {msg}")

        def run():
            log = Logger("warn")
            for level, msg in [("info", "start"), ("warn", "slow"), ("debug", "x"), ("error", "boom")]:
                log.log(level, msg)
            return log.lines
    """,
    "defaults_nested_config_merge": """
        DEFAULTS = {"net": {"port": 8545, "hosts": ["localhost"]}, "log": {"level": "info"}}

        def merged(overrides):
            out = {}
            for section, values in DEFAULTS.items():
                out[section] = dict(values)
                out[section].update(overrides.get(section, {}))
            return out

        def run():
            cfg = merged({"net": {"port": 9000}, "log": {"level": "debug"}})
            return [cfg, DEFAULTS["net"]["port"], cfg["net"]["hosts"] is DEFAULTS["net"]["hosts"]]
    """,
    "roman_numerals_module_table": """
        ROMAN = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
                 (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
        VALUES = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}

        def to_roman(n):
            out = []
            for value, letters in ROMAN:
                while n >= value:
                    out.append(letters)
                    n -= value
            return "".join(out)

        def from_roman(s):
            total = 0
            for i, ch in enumerate(s):
                v = VALUES[ch]
                total += -v if i + 1 < len(s) and VALUES[s[i + 1]] > v else v
            return total

        def run():
            nums = [1, 4, 9, 14, 40, 90, 400, 1994, 2024, 3999]
            romans = [to_roman(n) for n in nums]
            return [romans, [from_roman(r) for r in romans] == nums]
    """,
    "morse_code_module_dict": """
        MORSE = {"A": ".-", "B": "-...", "C": "-.-.", "D": "-..", "E": ".", "O": "---",
                 "S": "...", "T": "-", "R": ".-.", "N": "-."}
        REVERSE = {code: letter for letter, code in MORSE.items()}

        def encode(text):
            return " ".join(MORSE[c] for c in text.upper())

        def decode(code):
            return "".join(REVERSE[c] for c in code.split())

        def run():
            msg = encode("sos")
            return [msg, decode(msg), decode(encode("Actor"))]
    """,
    "enum_like_class_constants_table": """
        class Color:
            RED, GREEN, BLUE = range(3)
            NAMES = {RED: "red", GREEN: "green", BLUE: "blue"}

        def run():
            picks = [Color.BLUE, Color.RED, Color.BLUE]
            return [[Color.NAMES[p] for p in picks], Color.GREEN]
    """,
    "plugin_list_registered_by_decorator": """
        VALIDATORS = []

        def validator(fn):
            VALIDATORS.append(fn)
            return fn

        @validator
        def not_empty(s):
            return "empty" if not s else None

        @validator
        def short(s):
            return "too long" if len(s) > 8 else None

        @validator
        def lower(s):
            return "not lower" if s != s.lower() else None

        def run():
            report = {}
            for name in ["ann", "", "Roberto_Long", "Bo"]:
                report[name] = [e for e in (v(name) for v in VALIDATORS) if e]
            return report
    """,
}

# Augmented assignment to every target CPython accepts.
AUGMENTED = {
    "ledger_nested_dict_augassign": """
        def run():
            balances = {"ann": {"usd": 10, "eur": 0}, "bob": {"usd": 3, "eur": 7}}
            for who, cur, amount in [("ann", "usd", 5), ("bob", "eur", -2), ("ann", "eur", 4)]:
                balances[who][cur] += amount
            balances["bob"]["usd"] *= 3
            return balances
    """,
    "tally_by_attribute_key_augassign": """
        class Vote:
            def __init__(self, value, weight):
                self.value = value
                self.weight = weight

        def run():
            votes = [Vote("yes", 3), Vote("no", 1), Vote("yes", 2), Vote("abstain", 1)]
            t = {"yes": 0, "no": 0, "abstain": 0}
            for x in votes:
                t[x.value] += x.weight
            return t
    """,
    "cart_method_call_index_augassign": """
        class Cart:
            def __init__(self):
                self.items = [0, 0, 0]
                self.cursor = 0

            def i(self):
                self.cursor = (self.cursor + 1) % len(self.items)
                return self.cursor

            def bump(self, times):
                for _ in range(times):
                    self.items[self.i()] += 1
                return self.items

        def run():
            return [Cart().bump(7), Cart().bump(1)]
    """,
    "attribute_chain_augassign": """
        class Stats:
            def __init__(self):
                self.sub = 0
                self.hits = [0, 0]

        class Node:
            def __init__(self):
                self.attr = Stats()

        def run():
            obj = Node()
            for n in range(5):
                obj.attr.sub += n
                obj.attr.hits[n % 2] += 1
            obj.attr.sub **= 2
            return [obj.attr.sub, obj.attr.hits]
    """,
    "grid_two_index_augassign": """
        def run():
            a = [[3] * 4 for _ in range(3)]
            for i in range(3):
                for j in range(4):
                    if (i + j) % 2:
                        a[i][j] -= 1
                    else:
                        a[i][j] *= i + 1
            a[2][-1] <<= 3
            return a
    """,
    "attribute_subscript_floordiv_augassign": """
        class Pool:
            def __init__(self):
                self.y = {"gold": 100, "silver": 37}

        def run():
            x = Pool()
            for k in ["gold", "silver", "gold"]:
                x.y[k] //= 2
            x.y["silver"] %= 7
            return x.y
    """,
    "slice_augassign_list": """
        def run():
            xs = [1, 2, 3, 4, 5]
            xs[1:3] += [9]
            ys = list("abcdef")
            ys[::2] = [c.upper() for c in ys[::2]]
            ys[-2:] *= 2
            return [xs, ys]
    """,
    "permission_bits_every_operator": """
        def run():
            perms = {"ann": 0b0001, "bob": 0b1111}
            perms["ann"] |= 0b0100
            perms["bob"] &= ~0b0010
            perms["bob"] ^= 0b1000
            perms["ann"] <<= 2
            perms["bob"] >>= 1
            counts = [7, 9, 2]
            counts[0] **= 2
            counts[1] %= 4
            counts[2] -= 5
            counts[-1] *= -3
            return [perms, counts]
    """,
    "string_builder_dict_augassign": """
        def run():
            parts = {"head": "", "body": ""}
            for i, word in enumerate(["alpha", "beta", "gamma", "delta"]):
                key = "head" if i < 2 else "body"
                parts[key] += word[0].upper() + word[1:] + " "
            parts["body"] *= 2
            return {k: v.strip() for k, v in parts.items()}
    """,
    "matrix_multiply_augassign_cells": """
        def matmul(a, b):
            n, m, p = len(a), len(b), len(b[0])
            c = [[0] * p for _ in range(n)]
            for i in range(n):
                for j in range(p):
                    for k in range(m):
                        c[i][j] += a[i][k] * b[k][j]
            return c

        def run():
            a = [[1, 2], [3, 4], [5, 6]]
            b = [[7, 8, 9], [10, 11, 12]]
            return matmul(a, b)
    """,
    "augassign_index_evaluated_once": """
        CALLS = []

        def next_slot(slots):
            CALLS.append(len(CALLS))
            return len(CALLS) % len(slots)

        def run():
            slots = [0, 0, 0]
            for _ in range(5):
                slots[next_slot(slots)] += 10
            return [slots, len(CALLS)]
    """,
    "heatmap_tuple_key_augassign": """
        def run():
            heat = {}
            moves = [(0, 0), (1, 2), (0, 0), (1, 2), (1, 2), (3, 1)]
            for r, c in moves:
                heat[r, c] = heat.get((r, c), 0)
                heat[r, c] += 1
            return sorted(heat.items())
    """,
    "inventory_self_dict_of_lists_augassign": """
        class Inventory:
            def __init__(self):
                self.bins = {"a": [0, 0], "b": [5, 5]}

            def move(self, src, dst, qty):
                self.bins[src][1] -= qty
                self.bins[dst][0] += qty

        def run():
            inv = Inventory()
            inv.move("b", "a", 2)
            inv.move("b", "b", 1)
            return inv.bins
    """,
}

# Starred targets in for loops and comprehensions.
STARRED = {
    "csv_rows_first_rest_for": """
        def run():
            rows = ["ann,90,85,77", "bob,60", "cy,100,100"]
            report = []
            for name, *scores in (line.split(",") for line in rows):
                marks = [int(s) for s in scores]
                report.append((name, len(marks), sum(marks) // len(marks)))
            return report
    """,
    "comprehension_starred_pairs": """
        def run():
            rows = [[1, 2, 3], [4], [5, 6]]
            pairs = [(a, b) for a, *b in rows]
            heads = [b for *b, _ in rows]
            lookup = {a: len(b) for a, *b in rows}
            return [pairs, heads, lookup]
    """,
    "nested_starred_for_targets": """
        def run():
            items = [(("k1", 1, 2), "x"), (("k2",), "y"), (("k3", 9), "z")]
            out = {}
            for (key, *values), tag in items:
                out[key] = [tag, sum(values)]
            return out
    """,
    "starred_middle_for_route": """
        def run():
            routes = [["AMS", "FRA", "VIE", "BUD"], ["NYC", "LON"], ["SFO", "DEN", "ORD"]]
            out = []
            for origin, *stops, dest in routes:
                out.append(f"{origin}->{dest} via {','.join(stops) or '-'}")
            return out
    """,
    "dict_comprehension_starred_head_tail": """
        def run():
            lines = ["fruit apple pear", "veg leek", "grain"]
            catalogue = {head: tail for head, *tail in (l.split() for l in lines)}
            counts = {head: len(tail) for head, *tail in (l.split() for l in lines) if tail}
            return [catalogue, counts]
    """,
    "generator_starred_sum": """
        def run():
            orders = [("o1", 3, 4, 5), ("o2",), ("o3", 10)]
            lines = sum(len(rest) for _, *rest in orders)
            biggest = max(sum(rest) for _, *rest in orders)
            empty = [oid for oid, *rest in orders if not rest]
            return [lines, biggest, empty]
    """,
    "enumerate_with_starred_row": """
        def run():
            table = [("id", "name", "qty"), (1, "bolt", 10), (2, "nut", 4)]
            out = []
            for i, (first, *others) in enumerate(table):
                out.append([i, first, len(others)])
            return out
    """,
    "starred_for_command_lines": """
        def run():
            script = ["push 3", "push 4", "add", "push 10", "mul", "print"]
            stack, printed = [], []
            for op, *args in (line.split() for line in script):
                if op == "push":
                    stack.append(int(args[0]))
                elif op == "add":
                    stack.append(stack.pop() + stack.pop())
                elif op == "mul":
                    stack.append(stack.pop() * stack.pop())
                else:
                    printed.append(stack[-1])
            return [stack, printed]
    """,
}

# Chained comparisons whose operands are calls and attributes.
CHAINED = {
    "bucket_index_call_chain": """
        def bucket(x):
            return x // 10

        def run():
            n = 5
            return [x for x in [-3, 0, 7, 25, 49, 50, 51] if 0 <= bucket(x) < n]
    """,
    "band_attribute_bounds_chain": """
        class Band:
            def __init__(self, lo, hi, name):
                self.lo, self.hi, self.name = lo, hi, name

        def grade(v, bands):
            for a in bands:
                if a.lo <= v <= a.hi:
                    return a.name
            return "?"

        def run():
            bands = [Band(0, 49, "F"), Band(50, 69, "C"), Band(70, 84, "B"), Band(85, 100, "A")]
            return [grade(v, bands) for v in [12, 50, 69, 70, 99, 101]]
    """,
    "chain_evaluates_middle_once": """
        def run():
            calls = []

            def f(x):
                calls.append(x)
                return x * 2

            checks = [1 < f(1) < 3, 0 < f(5) < 5, 10 < f(1) < 20]
            return [checks, calls]
    """,
    "sorted_window_chain_with_len": """
        def run():
            xs = [3, 8, 15]
            ys = [9, 2, 4]
            return [xs[0] < xs[1] < xs[2] < len(xs) * 10,
                    ys[0] < ys[1] < ys[2],
                    min(xs) < max(ys) <= sum(ys) != len(ys)]
    """,
    "property_bounds_chain": """
        class Account:
            def __init__(self, balance, limit):
                self.balance = balance
                self.limit = limit

            @property
            def available(self):
                return self.balance + self.limit

        def can_spend(acct, amount):
            return 0 < amount <= acct.available

        def run():
            a = Account(100, 50)
            return [can_spend(a, 150), can_spend(a, 151), can_spend(a, 0)]
    """,
    "chained_identity_and_membership": """
        def run():
            a, b = None, 3
            xs, ys = [1, 2, 3], [3, 4]
            return [a is None is not b, b in xs in [xs, ys], 1 == 1 != 2 == 2,
                    "a" < "b" < "c" > "a", (1, 2) < (1, 3) <= (2,)]
    """,
}

# Nested format specs in f-strings.
FSTRING_SPECS = {
    "report_table_nested_width": """
        def run():
            rows = [("apple", 3), ("kiwi", 12), ("watermelon", 1)]
            width = max(len(name) for name, _ in rows) + 2
            lines = [f"{name:<{width}}|{qty:>{4}}" for name, qty in rows]
            return lines
    """,
    "fill_and_width_from_variables": """
        def run():
            out = []
            for fill, w, v in [("*", 6, 42), ("0", 8, 7), (".", 3, 12345)]:
                out.append(f"{v:{fill}>{w}}")
            return out
    """,
    "conditional_alignment_spec": """
        def cell(x, r):
            return f"{x:{'>' if r else '<'}10}|"

        def run():
            return [cell("left", False), cell("right", True), cell(12, True)]
    """,
    "zero_padded_ids_nested": """
        def run():
            digits = 5
            ids = [7, 42, 12345]
            padded = [f"ID-{n:0{digits}d}" for n in ids]
            sep = ","
            grouped = [f"{n:{sep}}" for n in [1234567, 100]]
            return padded + grouped
    """,
    "invoice_columns_computed_widths": """
        def run():
            lines = [("Widget", 2, 1250), ("Gadget long name", 1, 99), ("Nut", 100, 5)]
            w_name = max(len(n) for n, _, _ in lines)
            w_amt = max(len(str(q * p)) for _, q, p in lines)
            out = [f"{'Item':<{w_name}} {'Amount':>{w_amt}}"]
            for name, qty, price in lines:
                out.append(f"{name:<{w_name}} {qty * price:>{w_amt}}")
            return out
    """,
    "hex_dump_nested_spec": """
        def run():
            data = b"actor\\x00\\xff"
            width = 2
            hexes = " ".join(f"{b:0{width}x}" for b in data)
            bits = [f"{b:0{width * 4}b}" for b in data[:2]]
            return [hexes, bits]
    """,
    "banner_centre_nested": """
        def banner(title, w):
            return [f"{'':-^{w}}", f"{title:^{w}}", f"{'':=^{w}}"]

        def run():
            return banner("REPORT", 14) + banner("x", 5)
    """,
    "format_builtin_nested_spec_string": """
        def run():
            spec_align = {"name": "<", "qty": ">"}
            rows = [{"name": "bolt", "qty": 12}, {"name": "washer", "qty": 3}]
            out = []
            for row in rows:
                out.append(" | ".join(f"{row[k]:{spec_align[k]}{8}}" for k in ["name", "qty"]))
            return out
    """,
}

# from __future__, TYPE_CHECKING and other module-level ifs.
MODULE_IFS = {
    "future_annotations_linked_list": """
        from __future__ import annotations

        class Node:
            def __init__(self, value: int, next: Node | None = None) -> None:
                self.value = value
                self.next = next

            def push(self, value: int) -> Node:
                return Node(value, self)

        def to_list(node: Node | None) -> list[int]:
            out = []
            while node is not None:
                out.append(node.value)
                node = node.next
            return out

        def run():
            head = Node(1).push(2).push(3)
            return to_list(head)
    """,
    "future_annotations_dataclass": """
        from __future__ import annotations
        from dataclasses import dataclass, field

        @dataclass
        class Order:
            id: int
            lines: list[tuple[str, int]] = field(default_factory=list)
            parent: Order | None = None

            def total(self) -> int:
                return sum(q for _, q in self.lines)

        def run():
            o = Order(1, [("a", 2), ("b", 3)])
            child = Order(2, parent=o)
            return [o.total(), child.parent.id, repr(child)[:20]]
    """,
    "type_checking_import_block": """
        from typing import TYPE_CHECKING, List

        if TYPE_CHECKING:
            from typing import Dict

        def index(words: "List[str]") -> "Dict[str, int]":
            return {w: i for i, w in enumerate(words)}

        def run():
            return [TYPE_CHECKING, index(["x", "y"])]
    """,
    "module_if_debug_constant": """
        DEBUG = False

        if DEBUG:
            LIMIT = 10
            MODE = "debug"
        else:
            LIMIT = 100
            MODE = "prod"

        def run():
            return [LIMIT, MODE, [n for n in range(0, 1000, 37) if n < LIMIT]]
    """,
    "module_if_elif_network_params": """
        NETWORK = "testnet"

        if NETWORK == "mainnet":
            BLOCK_REWARD = 2
        elif NETWORK == "testnet":
            BLOCK_REWARD = 50
        else:
            BLOCK_REWARD = 0

        def reward(blocks):
            return blocks * BLOCK_REWARD

        def run():
            return [NETWORK, reward(12)]
    """,
    "type_checking_with_else_branch": """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            Amount = int
        else:
            Amount = "int"

        def run():
            return Amount
    """,
}

# __slots__ classes and @dataclass(slots=True).
SLOTS = {
    "slots_point_class": """
        class Point:
            __slots__ = ("x", "y")

            def __init__(self, x, y):
                self.x = x
                self.y = y

            def manhattan(self, other):
                return abs(self.x - other.x) + abs(self.y - other.y)

        def run():
            p, q = Point(1, 2), Point(4, -2)
            p.x += 1
            return [p.manhattan(q), p.x, q.y]
    """,
    "slots_refuse_new_attribute": """
        class Money:
            __slots__ = ("amount", "currency")

            def __init__(self, amount, currency):
                self.amount, self.currency = amount, currency

        def run():
            m = Money(5, "EUR")
            try:
                m.note = "x"
                added = True
            except AttributeError:
                added = False
            return [added, m.amount, m.currency, hasattr(m, "note")]
    """,
    "slots_inheritance": """
        class Shape:
            __slots__ = ("name",)

            def __init__(self, name):
                self.name = name

        class Rect(Shape):
            __slots__ = ("w", "h")

            def __init__(self, w, h):
                super().__init__("rect")
                self.w, self.h = w, h

            def area(self):
                return self.w * self.h

        def run():
            shapes = [Rect(2, 3), Rect(4, 4)]
            return [(s.name, s.area()) for s in shapes]
    """,
    "dataclass_slots_order": """
        from dataclasses import dataclass

        @dataclass(slots=True, order=True)
        class Bid:
            price: int
            qty: int
            who: str = ""

        def run():
            bids = [Bid(10, 2, "ann"), Bid(12, 1, "bob"), Bid(10, 1, "cy")]
            best = max(bids)
            return [repr(best), [b.who for b in sorted(bids)], Bid(1, 1) == Bid(1, 1)]
    """,
    "dataclass_slots_frozen": """
        from dataclasses import dataclass, replace

        @dataclass(slots=True, frozen=True)
        class Coin:
            symbol: str
            decimals: int = 18

        def run():
            c = Coin("TOK")
            try:
                c.decimals = 6
                changed = True
            except AttributeError:
                changed = False
            d = replace(c, decimals=6)
            return [changed, c.decimals, d.decimals, d.symbol]
    """,
}

# Builtins and library functions the issue names.
LIBRARY = {
    "base_exception_abort_control_flow": """
        class Abort(BaseException):
            pass

        def process(items):
            done = []
            for x in items:
                if x < 0:
                    raise Abort(f"negative {x}")
                done.append(x)
            return done

        def run():
            out = []
            for batch in [[1, 2], [3, -1, 4]]:
                try:
                    out.append(process(batch))
                except Exception:
                    out.append("exception")
                except BaseException as e:
                    out.append(["aborted", str(e), isinstance(e, Exception)])
            return out
    """,
    "unicode_decode_error_report": """
        def decode_all(blobs):
            out = []
            for blob in blobs:
                try:
                    out.append(blob.decode("utf-8"))
                except UnicodeDecodeError as e:
                    out.append([e.encoding, e.start, e.end, e.reason])
            return out

        def run():
            return decode_all([b"ok", b"caf\\xc3\\xa9", b"ab\\xffcd", b"\\xe2\\x82"])
    """,
    "ascii_for_logs": """
        def log_line(event, who):
            return f"{event} by {ascii(who)}"

        def run():
            names = ["café", "naïve", "plain", "日本"]
            return [log_line("login", n) for n in names] + [ascii(["é", 1])]
    """,
    "dict_fromkeys_inventory": """
        def run():
            items = ["bolt", "nut", "washer", "bolt"]
            stock = dict.fromkeys(items, 0)
            for it in ["nut", "bolt", "nut"]:
                stock[it] += 1
            flags = dict.fromkeys("abc")
            return [stock, flags, list(dict.fromkeys([3, 1, 3, 2, 1]))]
    """,
    "math_perm_seating": """
        import math

        def run():
            guests, seats = 6, 3
            return [math.perm(guests, seats), math.perm(5), math.comb(guests, seats),
                    math.perm(guests, seats) // math.factorial(seats)]
    """,
    "urlsafe_base64_tokens": """
        import base64

        def run():
            raw = bytes(range(250, 256)) + b"?>~"
            token = base64.urlsafe_b64encode(raw)
            plain = base64.b64encode(raw)
            return [token, plain, base64.urlsafe_b64decode(token) == raw,
                    base64.urlsafe_b64decode(b"aGk_"), token.rstrip(b"=").decode()]
    """,
    "string_template_substitute": """
        from string import Template

        def run():
            t = Template("Dear $name, you owe ${amount} TOK by block $$height.")
            msgs = [t.substitute(name=n, amount=a) for n, a in [("ann", 5), ("bob", 12)]]
            try:
                t.substitute(name="cy")
            except KeyError as e:
                msgs.append(f"missing {e}")
            return msgs
    """,
    "string_template_safe_substitute": """
        import string

        def run():
            t = string.Template("$who sent $amount to $to")
            return [t.safe_substitute(who="ann", amount=3),
                    t.safe_substitute({"to": "bob"}, who="cy"),
                    t.template]
    """,
    "json_indent_two_report": """
        import json

        def run():
            report = {"name": "ledger", "entries": [1, 2], "meta": {"ok": True, "note": None}}
            return json.dumps(report, indent=2)
    """,
    "json_indent_four_sort_keys": """
        import json

        def run():
            doc = {"zeta": [3, {"b": 1, "a": 2}], "alpha": "x", "empty": [], "obj": {}}
            text = json.dumps(doc, indent=4, sort_keys=True)
            return [text, json.loads(text) == doc]
    """,
    "json_nested_roundtrip": """
        import json

        def run():
            state = {"accounts": {"ann": {"balance": 10 ** 20, "nonces": [1, 2, 3]},
                                  "bob": {"balance": 0, "nonces": []}},
                     "paused": False, "owner": None, "tags": ["a", "é"]}
            text = json.dumps(state, sort_keys=True)
            back = json.loads(text)
            same = back == state
            back["accounts"]["bob"]["nonces"].append(1)
            return [text, same, back["accounts"]["bob"], json.dumps(back, sort_keys=True) == text]
    """,
}

# Function and exception introspection.
INTROSPECTION = {
    "function_name_registry": """
        def deposit(x):
            return x

        def withdraw(x):
            return -x

        def run():
            table = {f.__name__: f for f in [deposit, withdraw]}
            return [sorted(table), table["withdraw"](5), (lambda: 0).__name__]
    """,
    "method_qualname_and_doc": """
        class Vault:
            def lock(self):
                \"\"\"Lock the vault.\"\"\"
                return True

            def open(self):
                return False

        def helper():
            \"\"\"Helps.\"\"\"

        def run():
            return [Vault.lock.__qualname__, Vault.lock.__doc__, Vault.open.__doc__,
                    helper.__qualname__, helper.__doc__, Vault.open.__name__]
    """,
    "wraps_decorator_reads_wrapped": """
        import functools

        def checked(fn):
            @functools.wraps(fn)
            def inner(a, b):
                if b > a:
                    raise ValueError("overdraw")
                return fn(a, b)
            return inner

        @checked
        def transfer(a, b):
            \"\"\"Move tokens.\"\"\"
            return a - b

        def run():
            return [transfer(10, 3), transfer.__name__, transfer.__doc__,
                    transfer.__wrapped__(1, 5), transfer.__qualname__]
    """,
    "retry_decorator_wraps_and_cause": """
        from functools import wraps

        def retry(times):
            def deco(fn):
                @wraps(fn)
                def wrapper(*args, **kwargs):
                    last = None
                    for attempt in range(times):
                        try:
                            return fn(attempt, *args, **kwargs)
                        except ValueError as e:
                            last = e
                    raise RuntimeError(f"{fn.__name__} failed {times} times") from last
                return wrapper
            return deco

        @retry(3)
        def flaky(attempt, need):
            if attempt < need:
                raise ValueError(attempt)
            return attempt

        def run():
            out = [flaky(2), flaky.__name__]
            try:
                flaky(5)
            except RuntimeError as e:
                out += [str(e), repr(e.__cause__)]
            return out
    """,
    "exception_cause_explicit": """
        class ConfigError(Exception):
            pass

        def load(text):
            try:
                return int(text)
            except ValueError as e:
                raise ConfigError(f"bad value {text!r}") from e

        def run():
            try:
                load("abc")
            except ConfigError as e:
                return [str(e), type(e.__cause__) is ValueError, e.__suppress_context__,
                        str(e.__cause__)]
    """,
    "exception_context_implicit": """
        def cleanup(resource):
            raise RuntimeError(f"could not close {resource}")

        def run():
            try:
                try:
                    {}["missing"]
                except KeyError:
                    cleanup("db")
            except RuntimeError as e:
                ctx = e.__context__
                return [str(e), repr(ctx), e.__cause__ is None, isinstance(ctx, LookupError)]
    """,
    "raise_from_none_hides_context": """
        def lookup(table, key):
            try:
                return table[key]
            except KeyError:
                raise LookupError(f"no {key}") from None

        def run():
            try:
                lookup({}, "x")
            except LookupError as e:
                return [str(e), e.__cause__ is None, e.__suppress_context__,
                        type(e.__context__) is KeyError]
    """,
    "error_report_type_names": """
        def attempt(fn):
            try:
                fn()
                return "ok"
            except Exception as e:
                return f"{type(e).__name__}: {e}"

        def run():
            return [attempt(lambda: 1 // 0), attempt(lambda: [][1]), attempt(lambda: int("x")),
                    attempt(lambda: {}["k"]), attempt(lambda: None)]
    """,
}

# Plain objects (identity hash) as dict keys and set members.
IDENTITY = {
    "objects_as_dict_keys": """
        class Player:
            def __init__(self, name):
                self.name = name

        def run():
            players = [Player("ann"), Player("bob"), Player("ann")]
            score = {p: 0 for p in players}
            for p, pts in zip(players, [3, 5, 7]):
                score[p] += pts
            return [[score[p] for p in players], len(score)]
    """,
    "objects_in_set_membership": """
        class Token:
            pass

        def run():
            a, b = Token(), Token()
            used = {a}
            used.add(a)
            used.add(b)
            return [len(used), a in used, Token() in used, len(set([a, a, b, a]))]
    """,
    "object_graph_bfs": """
        from collections import deque

        class Node:
            def __init__(self, name):
                self.name = name
                self.edges = []

        def bfs(start):
            seen = {start}
            order = []
            queue = deque([start])
            while queue:
                node = queue.popleft()
                order.append(node.name)
                for nxt in node.edges:
                    if nxt not in seen:
                        seen.add(nxt)
                        queue.append(nxt)
            return order

        def run():
            a, b, c, d = Node("a"), Node("b"), Node("c"), Node("d")
            a.edges = [b, c]
            b.edges = [d, a]
            c.edges = [d]
            return bfs(a)
    """,
    "object_keyed_counter_and_defaultdict": """
        from collections import Counter, defaultdict

        class Wallet:
            def __init__(self, owner):
                self.owner = owner

        def run():
            w1, w2 = Wallet("ann"), Wallet("bob")
            txs = [(w1, 5), (w2, 3), (w1, 1)]
            counts = Counter(w for w, _ in txs)
            totals = defaultdict(int)
            for w, amount in txs:
                totals[w] += amount
            return [[(w.owner, counts[w], totals[w]) for w in (w1, w2)], len(totals)]
    """,
    "dedupe_subscribers_by_identity": """
        class Listener:
            def __init__(self, tag):
                self.tag = tag
                self.got = []

            def notify(self, msg):
                self.got.append(msg)

        def run():
            l1, l2 = Listener("x"), Listener("y")
            subs = [l1, l2, l1, l2, l1]
            unique = list(dict.fromkeys(subs))
            for s in unique:
                s.notify("hello")
            return [len(unique), l1.got, l2.got, [s.tag for s in unique]]
    """,
}

# Deep recursion (up to ~900 frames).
RECURSION = {
    "recursive_sum_900": """
        def total(xs, i=0):
            if i == len(xs):
                return 0
            return xs[i] + total(xs, i + 1)

        def run():
            return total(list(range(900)))
    """,
    "recursive_descent_parser_deep": """
        def parse(text):
            pos = 0

            def expr():
                nonlocal pos
                value = term()
                while pos < len(text) and text[pos] in "+-":
                    op = text[pos]
                    pos += 1
                    rhs = term()
                    value = value + rhs if op == "+" else value - rhs
                return value

            def term():
                nonlocal pos
                if text[pos] == "(":
                    pos += 1
                    value = expr()
                    pos += 1
                    return value
                start = pos
                while pos < len(text) and text[pos].isdigit():
                    pos += 1
                return int(text[start:pos])

            return expr()

        def run():
            depth = 280
            deep = "(" * depth + "1+2" + ")" * depth
            return [parse("1+(2-3)+10"), parse(deep), parse("((4))-(1+(1))")]
    """,
    "recursive_flatten_deep_nesting": """
        def flatten(x):
            if isinstance(x, list):
                out = []
                for item in x:
                    out.extend(flatten(item))
                return out
            return [x]

        def run():
            nested = [0]
            for i in range(1, 800):
                nested = [i, nested]
            flat = flatten(nested)
            return [len(flat), flat[:3], flat[-1]]
    """,
    "recursive_dfs_long_chain": """
        def run():
            n = 850
            graph = {i: [i + 1] for i in range(n - 1)}
            graph[n - 1] = []
            seen = []

            def dfs(node):
                seen.append(node)
                for nxt in graph[node]:
                    dfs(nxt)

            dfs(0)
            return [len(seen), seen[-1]]
    """,
}

# Ordinary programs: ledgers, books, parsers, graphs, caches, reports.
EVERYDAY = {
    "token_ledger_with_allowances": """
        class InsufficientBalance(Exception):
            pass

        class Token:
            def __init__(self, supply):
                self.balances = {"owner": supply}
                self.allowances = {}

            def transfer(self, src, dst, amount):
                if self.balances.get(src, 0) < amount:
                    raise InsufficientBalance(f"{src} has {self.balances.get(src, 0)}")
                self.balances[src] -= amount
                self.balances[dst] = self.balances.get(dst, 0) + amount

            def approve(self, owner, spender, amount):
                self.allowances[(owner, spender)] = amount

            def transfer_from(self, spender, src, dst, amount):
                allowed = self.allowances.get((src, spender), 0)
                if allowed < amount:
                    raise InsufficientBalance("allowance")
                self.transfer(src, dst, amount)
                self.allowances[(src, spender)] = allowed - amount

        def run():
            t = Token(1000)
            t.transfer("owner", "ann", 300)
            t.approve("ann", "bob", 100)
            t.transfer_from("bob", "ann", "cy", 60)
            errors = []
            for args in [("bob", "ann", "cy", 50), ("ann", "dan", 999)]:
                try:
                    (t.transfer_from if len(args) == 4 else t.transfer)(*args)
                except InsufficientBalance as e:
                    errors.append(str(e))
            return [t.balances, sorted(t.allowances.items()), errors]
    """,
    "order_book_bisect_matching": """
        import bisect

        class Book:
            def __init__(self):
                self.asks = []   # (price, seq, qty), ascending

            def add_ask(self, price, seq, qty):
                bisect.insort(self.asks, (price, seq, qty))

            def buy(self, limit, qty):
                fills = []
                while qty and self.asks and self.asks[0][0] <= limit:
                    price, seq, avail = self.asks.pop(0)
                    take = min(qty, avail)
                    fills.append((price, take))
                    qty -= take
                    if avail > take:
                        self.add_ask(price, seq, avail - take)
                return fills, qty

        def run():
            b = Book()
            for i, (p, q) in enumerate([(105, 5), (101, 2), (103, 4), (101, 3)]):
                b.add_ask(p, i, q)
            first = b.buy(103, 8)
            second = b.buy(110, 10)
            return [first, second, b.asks]
    """,
    "text_report_word_stats": """
        from collections import Counter

        def run():
            text = '''The quick brown fox jumps over the lazy dog.
        The dog sleeps; the fox runs!'''
            words = ["".join(c for c in w.lower() if c.isalpha()) for w in text.split()]
            words = [w for w in words if w]
            counts = Counter(words)
            lines = [f"{w:<6}{n:>3}" for w, n in counts.most_common(3)]
            return [len(words), len(counts), lines, max(words, key=len)]
    """,
    "traffic_light_enum_state_machine": """
        from enum import Enum

        class Light(Enum):
            RED = 30
            GREEN = 25
            YELLOW = 5

            def next(self):
                order = [Light.RED, Light.GREEN, Light.YELLOW]
                return order[(order.index(self) + 1) % len(order)]

        def run():
            state, t, log = Light.RED, 0, []
            while t < 100:
                log.append((t, state.name))
                t += state.value
                state = state.next()
            return log
    """,
    "inventory_counter_restock": """
        from collections import Counter

        def run():
            stock = Counter({"bolt": 20, "nut": 5, "gear": 1})
            sold = Counter(["bolt"] * 7 + ["nut"] * 5 + ["gear"])
            stock.subtract(sold)
            low = sorted(item for item, qty in stock.items() if qty < 3)
            restock = Counter({item: 10 for item in low})
            stock.update(restock)
            return [dict(stock), low, stock.total(), (+stock).most_common(1)]
    """,
    "binary_heap_priority_queue_class": """
        class MinHeap:
            def __init__(self):
                self.data = []

            def push(self, item):
                d = self.data
                d.append(item)
                i = len(d) - 1
                while i and d[(i - 1) // 2] > d[i]:
                    d[i], d[(i - 1) // 2] = d[(i - 1) // 2], d[i]
                    i = (i - 1) // 2

            def pop(self):
                d = self.data
                d[0], d[-1] = d[-1], d[0]
                top = d.pop()
                i = 0
                while True:
                    kids = [k for k in (2 * i + 1, 2 * i + 2) if k < len(d)]
                    if not kids:
                        break
                    k = min(kids, key=lambda j: d[j])
                    if d[k] >= d[i]:
                        break
                    d[i], d[k] = d[k], d[i]
                    i = k
                return top

        def run():
            h = MinHeap()
            for job in [(3, "c"), (1, "a"), (4, "d"), (1, "b"), (9, "z"), (2, "x")]:
                h.push(job)
            return [h.pop() for _ in range(len(h.data))]
    """,
    "arithmetic_tokenizer": """
        def tokenize(src):
            tokens, i = [], 0
            while i < len(src):
                ch = src[i]
                if ch.isspace():
                    i += 1
                elif ch.isdigit():
                    j = i
                    while j < len(src) and src[j].isdigit():
                        j += 1
                    tokens.append(("NUM", int(src[i:j])))
                    i = j
                elif ch.isalpha() or ch == "_":
                    j = i
                    while j < len(src) and (src[j].isalnum() or src[j] == "_"):
                        j += 1
                    tokens.append(("NAME", src[i:j]))
                    i = j
                elif src.startswith("**", i):
                    tokens.append(("OP", "**"))
                    i += 2
                elif ch in "+-*/()=":
                    tokens.append(("OP", ch))
                    i += 1
                else:
                    raise SyntaxError(f"unexpected {ch!r} at {i}")
            return tokens

        def run():
            out = [tokenize("total = price_1 * 12 + (tax ** 2)")]
            try:
                tokenize("a $ b")
            except SyntaxError as e:
                out.append(str(e))
            return out
    """,
    "matrix_helper_functions": """
        def transpose(m):
            return [list(row) for row in zip(*m)]

        def identity(n):
            return [[int(i == j) for j in range(n)] for i in range(n)]

        def mul(a, b):
            return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]

        def det(m):
            # Bareiss fraction-free elimination: exact with integers
            m = [row[:] for row in m]
            n, sign, prev = len(m), 1, 1
            for k in range(n - 1):
                if m[k][k] == 0:
                    swap = next((r for r in range(k + 1, n) if m[r][k]), None)
                    if swap is None:
                        return 0
                    m[k], m[swap] = m[swap], m[k]
                    sign = -sign
                for i in range(k + 1, n):
                    for j in range(k + 1, n):
                        m[i][j] = (m[i][j] * m[k][k] - m[i][k] * m[k][j]) // prev
                prev = m[k][k]
            return sign * m[-1][-1]

        def run():
            a = [[2, 0, 1], [1, 3, 2], [1, 1, 1]]
            return [transpose([[1, 2, 3], [4, 5, 6]]), mul(a, identity(3)) == a,
                    mul(a, a), det(a), det([[0, 1], [1, 0]]), det([[1, 2], [2, 4]])]
    """,
    "round_robin_scheduler_deque": """
        from collections import deque

        def schedule(jobs, quantum):
            queue = deque(jobs.items())
            clock, finished = 0, []
            while queue:
                name, left = queue.popleft()
                used = min(quantum, left)
                clock += used
                if left > used:
                    queue.append((name, left - used))
                else:
                    finished.append((name, clock))
            return finished

        def run():
            return [schedule({"a": 5, "b": 2, "c": 7}, 3), schedule({"x": 1}, 4)]
    """,
    "rpn_calculator_errors": """
        import operator

        OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.floordiv}

        def rpn(expr):
            stack = []
            for tok in expr.split():
                if tok in OPS:
                    if len(stack) < 2:
                        raise ValueError(f"stack underflow at {tok}")
                    b, a = stack.pop(), stack.pop()
                    stack.append(OPS[tok](a, b))
                else:
                    stack.append(int(tok))
            if len(stack) != 1:
                raise ValueError(f"leftover {stack}")
            return stack[0]

        def run():
            out = []
            for e in ["3 4 + 2 *", "5 1 2 + 4 * + 3 -", "1 +", "1 2", "7 0 /", "-3 2 /"]:
                try:
                    out.append(rpn(e))
                except (ValueError, ZeroDivisionError) as err:
                    out.append(f"error: {err}")
            return out
    """,
    "run_length_encoding_groupby": """
        from itertools import groupby

        def encode(s):
            return "".join(f"{len(list(g))}{ch}" for ch, g in groupby(s))

        def decode(s):
            out, num = [], ""
            for ch in s:
                if ch.isdigit():
                    num += ch
                else:
                    out.append(ch * int(num))
                    num = ""
            return "".join(out)

        def run():
            samples = ["WWWWWWWWWWWWBWWWWWWWWWWWWBBBWWWWWWWWWWWWWWWWWWWWWWWWBWWWWWWWWWWWWWW", "abc", ""]
            enc = [encode(s) for s in samples]
            return [enc, [decode(e) for e in enc] == samples]
    """,
    "grid_bfs_shortest_path": """
        from collections import deque

        def shortest(grid, start, goal):
            rows, cols = len(grid), len(grid[0])
            dist = {start: 0}
            queue = deque([start])
            while queue:
                r, c = queue.popleft()
                if (r, c) == goal:
                    return dist[(r, c)]
                for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    nr, nc = r + dr, c + dc
                    if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] == "." and (nr, nc) not in dist:
                        dist[(nr, nc)] = dist[(r, c)] + 1
                        queue.append((nr, nc))
            return -1

        def run():
            grid = ["....#", ".##.#", "...#.", "#....", "....."]
            return [shortest(grid, (0, 0), (4, 4)), shortest(grid, (0, 0), (2, 4)),
                    shortest([".#", "#."], (0, 0), (1, 1))]
    """,
    "topological_sort_dfs": """
        def toposort(deps):
            order, state = [], {}

            def visit(n):
                if state.get(n) == "done":
                    return
                if state.get(n) == "active":
                    raise ValueError(f"cycle at {n}")
                state[n] = "active"
                for d in sorted(deps.get(n, ())):
                    visit(d)
                state[n] = "done"
                order.append(n)

            for n in sorted(deps):
                visit(n)
            return order

        def run():
            deps = {"app": ["lib", "log"], "lib": ["core"], "log": ["core"], "core": []}
            out = [toposort(deps)]
            try:
                toposort({"a": ["b"], "b": ["a"]})
            except ValueError as e:
                out.append(str(e))
            return out
    """,
    "dijkstra_integer_weights": """
        import bisect

        def dijkstra(graph, src):
            dist = {src: 0}
            frontier = [(0, src)]
            done = set()
            while frontier:
                d, node = frontier.pop(0)
                if node in done:
                    continue
                done.add(node)
                for nxt, w in graph.get(node, []):
                    nd = d + w
                    if nd < dist.get(nxt, 10 ** 18):
                        dist[nxt] = nd
                        bisect.insort(frontier, (nd, nxt))
            return dict(sorted(dist.items()))

        def run():
            g = {"A": [("B", 7), ("C", 9), ("F", 14)], "B": [("C", 10), ("D", 15)],
                 "C": [("D", 11), ("F", 2)], "D": [("E", 6)], "F": [("E", 9)]}
            return [dijkstra(g, "A"), dijkstra(g, "D")]
    """,
    "merge_intervals": """
        def merge(intervals):
            out = []
            for start, end in sorted(intervals):
                if out and start <= out[-1][1]:
                    out[-1][1] = max(out[-1][1], end)
                else:
                    out.append([start, end])
            return out

        def run():
            return [merge([(1, 3), (2, 6), (8, 10), (15, 18)]), merge([(1, 4), (4, 5)]),
                    merge([(5, 7), (1, 2), (2, 3), (6, 9)]), merge([])]
    """,
    "lru_cache_class_ordered_dict": """
        from collections import OrderedDict

        class LRU:
            def __init__(self, capacity):
                self.capacity = capacity
                self.data = OrderedDict()
                self.evicted = []

            def get(self, key):
                if key not in self.data:
                    return None
                self.data.move_to_end(key)
                return self.data[key]

            def put(self, key, value):
                if key in self.data:
                    self.data.move_to_end(key)
                self.data[key] = value
                if len(self.data) > self.capacity:
                    self.evicted.append(self.data.popitem(last=False)[0])

        def run():
            c = LRU(2)
            c.put("a", 1)
            c.put("b", 2)
            got = [c.get("a")]
            c.put("c", 3)
            got += [c.get("b"), c.get("c")]
            c.put("a", 10)
            c.put("d", 4)
            return [got, list(c.data.items()), c.evicted]
    """,
    "bank_accounts_exceptions": """
        class BankError(Exception):
            pass

        class Overdraft(BankError):
            def __init__(self, need, have):
                super().__init__(f"need {need}, have {have}")
                self.short = need - have

        class Frozen(BankError):
            pass

        class Bank:
            def __init__(self, accounts):
                self.accounts = dict(accounts)
                self.frozen = set()

            def withdraw(self, name, amount):
                if name in self.frozen:
                    raise Frozen(name)
                if self.accounts[name] < amount:
                    raise Overdraft(amount, self.accounts[name])
                self.accounts[name] -= amount

        def run():
            bank = Bank({"ann": 50, "bob": 0})
            bank.frozen.add("bob")
            log = []
            for name, amount in [("ann", 20), ("ann", 40), ("bob", 1), ("cy", 1)]:
                try:
                    bank.withdraw(name, amount)
                    log.append("ok")
                except Overdraft as e:
                    log.append(["overdraft", e.short, str(e)])
                except BankError as e:
                    log.append(["bank", repr(e)])
                except KeyError as e:
                    log.append(["unknown", e.args[0]])
            return [log, bank.accounts]
    """,
    "caesar_and_vigenere_ciphers": """
        import string

        def shift(ch, k):
            if ch.islower():
                return chr((ord(ch) - 97 + k) % 26 + 97)
            if ch.isupper():
                return chr((ord(ch) - 65 + k) % 26 + 65)
            return ch

        def caesar(text, k):
            return "".join(shift(c, k) for c in text)

        def vigenere(text, key, sign=1):
            ks = [string.ascii_lowercase.index(c) for c in key]
            return "".join(shift(c, sign * ks[i % len(ks)]) for i, c in enumerate(text))

        def run():
            c = caesar("Hello, World!", 3)
            v = vigenere("attackatdawn", "lemon")
            return [c, caesar(c, -3), v, vigenere(v, "lemon", -1)]
    """,
    "anagram_groups_defaultdict": """
        from collections import defaultdict

        def run():
            words = ["listen", "silent", "enlist", "google", "gooegl", "cat", "act", "tac", "dog"]
            groups = defaultdict(list)
            for w in words:
                groups["".join(sorted(w))].append(w)
            return sorted((sorted(g) for g in groups.values() if len(g) > 1), key=len, reverse=True)
    """,
    "balanced_brackets_stack": """
        PAIRS = {")": "(", "]": "[", "}": "{"}

        def check(s):
            stack = []
            for i, ch in enumerate(s):
                if ch in "([{":
                    stack.append((ch, i))
                elif ch in PAIRS:
                    if not stack or stack[-1][0] != PAIRS[ch]:
                        return f"unexpected {ch} at {i}"
                    stack.pop()
            return "ok" if not stack else f"unclosed {stack[-1][0]} at {stack[-1][1]}"

        def run():
            return [check(s) for s in ["(a[b]{c})", "(]", "((x)", "", "{[()()]}}"]]
    """,
    "binary_search_variants": """
        def lower_bound(xs, x):
            lo, hi = 0, len(xs)
            while lo < hi:
                mid = (lo + hi) // 2
                if xs[mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            return lo

        def isqrt(n):
            lo, hi = 0, n + 1
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if mid * mid <= n else (lo, mid)
            return lo

        def run():
            xs = [1, 3, 3, 5, 8, 13]
            return [[lower_bound(xs, x) for x in [0, 3, 4, 13, 99]], isqrt(10 ** 20 + 1), isqrt(15)]
    """,
    "sieve_of_eratosthenes": """
        def sieve(n):
            is_p = [True] * (n + 1)
            is_p[0] = is_p[1] = False
            for i in range(2, n + 1):
                if i * i > n:
                    break
                if is_p[i]:
                    is_p[i * i::i] = [False] * len(range(i * i, n + 1, i))
            return [i for i, p in enumerate(is_p) if p]

        def run():
            ps = sieve(200)
            twins = [(p, p + 2) for p in ps if p + 2 in ps]
            return [len(ps), ps[-5:], twins[:5]]
    """,
    "fraction_class_dunders": """
        import math

        class Frac:
            def __init__(self, num, den=1):
                if den == 0:
                    raise ZeroDivisionError("denominator is zero")
                g = math.gcd(num, den) * (1 if den > 0 else -1)
                self.num, self.den = num // g, den // g

            def __add__(self, o):
                return Frac(self.num * o.den + o.num * self.den, self.den * o.den)

            def __mul__(self, o):
                return Frac(self.num * o.num, self.den * o.den)

            def __eq__(self, o):
                return (self.num, self.den) == (o.num, o.den)

            def __lt__(self, o):
                return self.num * o.den < o.num * self.den

            def __repr__(self):
                return f"{self.num}/{self.den}"

        def run():
            h = Frac(0)
            for k in range(1, 6):
                h = h + Frac(1, k)
            xs = sorted([Frac(1, 3), Frac(-1, 2), Frac(2, 4), Frac(3, -9)])
            return [repr(h), repr(Frac(6, -8)), repr(xs), Frac(1, 2) == Frac(2, 4), repr(Frac(2, 3) * Frac(3, 4))]
    """,
    "coin_change_greedy_and_dp": """
        def greedy(amount, coins):
            out = {}
            for c in sorted(coins, reverse=True):
                out[c], amount = divmod(amount, c)
            return {c: n for c, n in out.items() if n}, amount

        def fewest(amount, coins):
            best = [0] + [None] * amount
            for a in range(1, amount + 1):
                options = [best[a - c] for c in coins if c <= a and best[a - c] is not None]
                best[a] = min(options) + 1 if options else None
            return best[amount]

        def run():
            return [greedy(289, [1, 5, 10, 25, 100]), fewest(6, [1, 3, 4]), greedy(6, [1, 3, 4]),
                    fewest(7, [2, 4])]
    """,
    "knapsack_dp_with_items": """
        def knapsack(items, cap):
            best = [[0] * (cap + 1) for _ in range(len(items) + 1)]
            for i, (name, w, v) in enumerate(items, 1):
                for c in range(cap + 1):
                    best[i][c] = best[i - 1][c]
                    if w <= c:
                        best[i][c] = max(best[i][c], best[i - 1][c - w] + v)
            chosen, c = [], cap
            for i in range(len(items), 0, -1):
                if best[i][c] != best[i - 1][c]:
                    chosen.append(items[i - 1][0])
                    c -= items[i - 1][1]
            return best[-1][cap], sorted(chosen)

        def run():
            items = [("map", 9, 150), ("compass", 13, 35), ("water", 153, 200), ("sandwich", 50, 160),
                     ("glucose", 15, 60), ("tin", 68, 45), ("banana", 27, 60), ("apple", 39, 40)]
            return knapsack(items, 200)
    """,
    "edit_distance_and_lcs": """
        def edit_distance(a, b):
            prev = list(range(len(b) + 1))
            for i, ca in enumerate(a, 1):
                cur = [i]
                for j, cb in enumerate(b, 1):
                    cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
                prev = cur
            return prev[-1]

        def lcs(a, b):
            t = [[""] * (len(b) + 1) for _ in range(len(a) + 1)]
            for i in range(len(a) - 1, -1, -1):
                for j in range(len(b) - 1, -1, -1):
                    t[i][j] = a[i] + t[i + 1][j + 1] if a[i] == b[j] else max(t[i + 1][j], t[i][j + 1], key=len)
            return t[0][0]

        def run():
            return [edit_distance("kitten", "sitting"), edit_distance("", "abc"),
                    lcs("ABCBDAB", "BDCABA"), lcs("actor", "factory")]
    """,
    "generator_pipeline_log_lines": """
        def read_lines(text):
            for line in text.splitlines():
                yield line.strip()

        def non_empty(lines):
            return (l for l in lines if l and not l.startswith("#"))

        def parse(lines):
            for l in lines:
                level, _, msg = l.partition(" ")
                yield level, msg

        def run():
            log = '''
            # header
            INFO started
            WARN disk 91
            INFO tick

            ERROR failed to bind
            '''
            counts = {}
            errors = []
            for level, msg in parse(non_empty(read_lines(log))):
                counts[level] = counts.get(level, 0) + 1
                if level == "ERROR":
                    errors.append(msg)
            return [counts, errors]
    """,
    "closure_counter_factory": """
        def make_counter(start=0, step=1):
            count = start

            def tick():
                nonlocal count
                count += step
                return count

            def reset():
                nonlocal count
                count = start
            return tick, reset

        def run():
            tick, reset = make_counter(10, 5)
            a = [tick(), tick(), tick()]
            reset()
            other, _ = make_counter()
            return [a, tick(), other(), other()]
    """,
    "property_setter_validation": """
        class Thermostat:
            def __init__(self, target):
                self._target = 0
                self.target = target

            @property
            def target(self):
                return self._target

            @target.setter
            def target(self, value):
                if not 5 <= value <= 30:
                    raise ValueError(f"target {value} out of range")
                self._target = value

            @property
            def fahrenheit(self):
                return self._target * 9 // 5 + 32

        def run():
            t = Thermostat(20)
            out = [t.target, t.fahrenheit]
            for v in [25, 40, 4]:
                try:
                    t.target = v
                except ValueError as e:
                    out.append(str(e))
            return out + [t.target]
    """,
    "sort_employees_multiple_keys": """
        from operator import attrgetter, itemgetter

        class Emp:
            def __init__(self, name, dept, salary):
                self.name, self.dept, self.salary = name, dept, salary

        def run():
            staff = [Emp("ann", "ops", 70), Emp("bob", "dev", 90), Emp("cy", "dev", 90),
                     Emp("di", "ops", 65), Emp("ed", "dev", 80)]
            by_dept = sorted(staff, key=attrgetter("dept", "name"))
            by_pay = sorted(staff, key=lambda e: (-e.salary, e.name))
            rows = sorted([(e.dept, e.salary) for e in staff], key=itemgetter(1, 0))
            return [[e.name for e in by_dept], [e.name for e in by_pay], rows]
    """,
    "enum_flag_permissions": """
        from enum import Flag, auto

        class Perm(Flag):
            READ = auto()
            WRITE = auto()
            ADMIN = auto()

        def can(granted, needed):
            return needed in granted

        def run():
            user = Perm.READ | Perm.WRITE
            return [can(user, Perm.WRITE), can(user, Perm.ADMIN), can(user, Perm.READ | Perm.WRITE),
                    user.value, Perm.ADMIN.value, repr(Perm.READ)]
    """,
    "itertools_sales_report": """
        import itertools

        def run():
            sales = [("north", 3), ("north", 5), ("south", 2), ("east", 7), ("east", 1)]
            by_region = {k: sum(v for _, v in g) for k, g in itertools.groupby(sales, key=lambda s: s[0])}
            running = list(itertools.accumulate(v for _, v in sales))
            pairs = list(itertools.combinations(sorted(by_region), 2))
            grid = list(itertools.product("ab", [1, 2]))
            merged = list(itertools.chain.from_iterable([[1, 2], [3], []]))
            zipped = list(itertools.zip_longest("abc", [1], fillvalue=0))
            head = list(itertools.takewhile(lambda x: x < 10, running))
            rest = list(itertools.dropwhile(lambda x: x < 10, running))
            return [by_region, running, pairs, grid, merged, zipped, head, rest,
                    list(itertools.starmap(pow, [(2, 5), (3, 2)])),
                    list(itertools.islice(itertools.cycle("xy"), 5))]
    """,
    "functools_partial_reduce_cmp": """
        from functools import partial, reduce, cmp_to_key, total_ordering

        def fee(amount, rate, minimum):
            return max(amount * rate // 1000, minimum)

        @total_ordering
        class Version:
            def __init__(self, text):
                self.parts = tuple(int(p) for p in text.split("."))

            def __eq__(self, o):
                return self.parts == o.parts

            def __lt__(self, o):
                return self.parts < o.parts

        def by_len_then_alpha(a, b):
            return (len(a) - len(b)) or (-1 if a < b else (a > b))

        def run():
            small_fee = partial(fee, rate=3, minimum=5)
            versions = sorted(["1.10.0", "1.2.3", "1.2.10", "0.9"], key=Version)
            return [small_fee(100), small_fee(10_000), reduce(lambda acc, x: acc * 10 + x, [4, 0, 2], 0),
                    versions, Version("2.0") >= Version("1.9"),
                    sorted(["pear", "fig", "apple", "kiwi"], key=cmp_to_key(by_len_then_alpha))]
    """,
    "namedtuple_records_replace_asdict": """
        from collections import namedtuple

        Trade = namedtuple("Trade", ["sym", "qty", "price"])

        def run():
            trades = [Trade("ABC", 10, 101), Trade("XYZ", 5, 20), Trade("ABC", -4, 103)]
            pos = {}
            for t in trades:
                pos[t.sym] = pos.get(t.sym, 0) + t.qty
            fixed = trades[1]._replace(price=21)
            return [pos, fixed._asdict(), tuple(fixed), Trade._fields, sum(t.qty * t.price for t in trades)]
    """,
    "sliding_window_maximum_deque": """
        from collections import deque

        def window_max(xs, k):
            dq, out = deque(), []
            for i, x in enumerate(xs):
                while dq and xs[dq[-1]] <= x:
                    dq.pop()
                dq.append(i)
                if dq[0] <= i - k:
                    dq.popleft()
                if i >= k - 1:
                    out.append(xs[dq[0]])
            return out

        def run():
            return [window_max([1, 3, -1, -3, 5, 3, 6, 7], 3), window_max([4, 2], 1)]
    """,
    "union_find_components": """
        class DSU:
            def __init__(self, n):
                self.parent = list(range(n))
                self.size = [1] * n

            def find(self, x):
                while self.parent[x] != x:
                    self.parent[x] = self.parent[self.parent[x]]
                    x = self.parent[x]
                return x

            def union(self, a, b):
                ra, rb = self.find(a), self.find(b)
                if ra == rb:
                    return False
                if self.size[ra] < self.size[rb]:
                    ra, rb = rb, ra
                self.parent[rb] = ra
                self.size[ra] += self.size[rb]
                return True

        def run():
            d = DSU(8)
            merged = [d.union(a, b) for a, b in [(0, 1), (2, 3), (1, 3), (0, 2), (5, 6)]]
            groups = {}
            for i in range(8):
                groups.setdefault(d.find(i), []).append(i)
            return [merged, sorted(groups.values())]
    """,
    "trie_autocomplete": """
        class Trie:
            def __init__(self):
                self.root = {}

            def insert(self, word):
                node = self.root
                for ch in word:
                    node = node.setdefault(ch, {})
                node["$"] = True

            def complete(self, prefix):
                node = self.root
                for ch in prefix:
                    if ch not in node:
                        return []
                    node = node[ch]
                out = []

                def walk(n, acc):
                    for ch in sorted(n):
                        if ch == "$":
                            out.append(prefix + acc)
                        else:
                            walk(n[ch], acc + ch)
                walk(node, "")
                return out

        def run():
            t = Trie()
            for w in ["car", "cart", "care", "cat", "dog", "do"]:
                t.insert(w)
            return [t.complete("car"), t.complete("do"), t.complete("x"), t.complete("")]
    """,
    "event_emitter_callbacks": """
        class Emitter:
            def __init__(self):
                self.handlers = {}

            def on(self, event, fn):
                self.handlers.setdefault(event, []).append(fn)
                return fn

            def emit(self, event, *args):
                return [fn(*args) for fn in self.handlers.get(event, [])]

        def run():
            log = []
            bus = Emitter()
            bus.on("transfer", lambda a, b, n: log.append(f"{a}->{b}:{n}"))
            bus.on("transfer", lambda a, b, n: n * 2)
            bus.on("mint", lambda n: n)
            results = [bus.emit("transfer", "ann", "bob", 5), bus.emit("mint", 9), bus.emit("burn")]
            return [results, log]
    """,
    "days_between_dates_integer": """
        def days_from_civil(y, m, d):
            y -= m <= 2
            era = (y if y >= 0 else y - 399) // 400
            yoe = y - era * 400
            doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
            doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
            return era * 146097 + doe - 719468

        def weekday(y, m, d):
            return ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days_from_civil(y, m, d) % 7]

        def run():
            return [days_from_civil(1970, 1, 1), days_from_civil(2000, 3, 1),
                    days_from_civil(2024, 12, 25) - days_from_civil(2024, 1, 1),
                    weekday(2024, 2, 29), weekday(1999, 12, 31)]
    """,
    "base_conversion_helpers": """
        DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"

        def to_base(n, b):
            if n == 0:
                return "0"
            sign, n = ("-", -n) if n < 0 else ("", n)
            out = []
            while n:
                n, r = divmod(n, b)
                out.append(DIGITS[r])
            return sign + "".join(reversed(out))

        def run():
            vals = [0, 255, -255, 10 ** 12, 36 ** 3]
            return [[to_base(v, b) for v in vals] for b in (2, 16, 36)] + \\
                   [[int(to_base(v, 36), 36) for v in vals] == vals]
    """,
    "luhn_and_iban_checksums": """
        def luhn_ok(number):
            digits = [int(c) for c in number if c.isdigit()][::-1]
            total = 0
            for i, d in enumerate(digits):
                if i % 2:
                    d *= 2
                    if d > 9:
                        d -= 9
                total += d
            return total % 10 == 0

        def iban_ok(iban):
            s = iban.replace(" ", "").upper()
            s = s[4:] + s[:4]
            return int("".join(str(int(c, 36)) for c in s)) % 97 == 1

        def run():
            return [[luhn_ok(n) for n in ["4539 1488 0343 6467", "8273 1232 7352 0569", "79927398713"]],
                    [iban_ok(i) for i in ["GB82 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 33"]]]
    """,
    "markdown_table_report": """
        def table(headers, rows):
            cols = list(zip(headers, *rows))
            widths = [max(len(str(v)) for v in col) for col in cols]
            def line(values):
                return "| " + " | ".join(str(v).ljust(w) if isinstance(v, str) else str(v).rjust(w)
                                         for v, w in zip(values, widths)) + " |"
            sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
            return [line(headers), sep] + [line(r) for r in rows]

        def run():
            return table(["actor", "calls", "cycles"], [("token", 12, 40213), ("dex", 3, 1000077), ("nft", 140, 9)])
    """,
    "csv_parse_with_quotes": """
        def parse_line(line):
            fields, cur, quoted, i = [], [], False, 0
            while i < len(line):
                ch = line[i]
                if quoted:
                    if ch == '"' and line[i + 1:i + 2] == '"':
                        cur.append('"')
                        i += 1
                    elif ch == '"':
                        quoted = False
                    else:
                        cur.append(ch)
                elif ch == '"':
                    quoted = True
                elif ch == ",":
                    fields.append("".join(cur))
                    cur = []
                else:
                    cur.append(ch)
                i += 1
            fields.append("".join(cur))
            return fields

        def run():
            rows = ['name,qty,note', 'bolt,10,"M4, zinc"', 'nut,5,"say ""hi"" now"', ',,']
            header, *body = [parse_line(r) for r in rows]
            return [dict(zip(header, r)) for r in body]
    """,
    "pagination_helper": """
        def paginate(items, per_page, page):
            pages = max(1, -(-len(items) // per_page))
            if not 1 <= page <= pages:
                raise IndexError(f"page {page} of {pages}")
            start = (page - 1) * per_page
            return {"page": page, "pages": pages, "items": items[start:start + per_page],
                    "has_next": page < pages}

        def run():
            items = [f"tx{i}" for i in range(11)]
            out = [paginate(items, 4, p) for p in (1, 3)]
            try:
                paginate(items, 4, 4)
            except IndexError as e:
                out.append(str(e))
            out.append(paginate([], 10, 1))
            return out
    """,
    "histogram_text_bars": """
        def run():
            data = {"mon": 3, "tue": 7, "wed": 0, "thu": 12, "fri": 5}
            peak = max(data.values())
            width = 20
            lines = []
            for day, n in data.items():
                bar = "#" * (n * width // peak)
                lines.append(f"{day} {bar:<20} {n:>3}")
            return lines
    """,
    "coroutine_running_average": """
        def averager():
            total = count = 0
            average = None
            while True:
                value = yield average
                if value is None:
                    break
                total += value
                count += 1
                average = total // count
            return (count, total)

        def run():
            g = averager()
            next(g)
            seen = [g.send(v) for v in [10, 20, 33, 1]]
            try:
                g.send(None)
            except StopIteration as stop:
                final = stop.value
            return [seen, final]
    """,
    "yield_from_tree_walk": """
        def walk(tree, depth=0):
            name, children = tree
            yield depth, name
            for child in children:
                yield from walk(child, depth + 1)

        def run():
            tree = ("root", [("src", [("main.py", []), ("util.py", [])]), ("README", [])])
            return ["  " * d + n for d, n in walk(tree)]
    """,
    "try_finally_in_loop_break_continue": """
        def run():
            log = []
            for i in range(6):
                try:
                    if i == 1:
                        continue
                    if i == 4:
                        break
                    if i == 3:
                        raise ValueError(i)
                    log.append(f"body {i}")
                except ValueError as e:
                    log.append(f"caught {e}")
                else:
                    log.append(f"else {i}")
                finally:
                    log.append(f"finally {i}")
            return log
    """,
    "context_manager_transaction": """
        class Transaction:
            def __init__(self, ledger):
                self.ledger = ledger

            def __enter__(self):
                self.snapshot = dict(self.ledger)
                return self.ledger

            def __exit__(self, exc_type, exc, tb):
                if exc_type is not None:
                    self.ledger.clear()
                    self.ledger.update(self.snapshot)
                    return exc_type is ValueError
                return False

        def run():
            ledger = {"ann": 10}
            with Transaction(ledger) as l:
                l["ann"] -= 3
                l["bob"] = 3
            with Transaction(ledger) as l:
                l["ann"] -= 100
                raise ValueError("negative")
            try:
                with Transaction(ledger) as l:
                    l["cy"] = 1
                    raise KeyError("boom")
            except KeyError:
                pass
            return ledger
    """,
    "match_case_command_interpreter": """
        def execute(cmd, state):
            match cmd.split():
                case ["deposit", amount]:
                    state["balance"] += int(amount)
                case ["withdraw", amount] if int(amount) <= state["balance"]:
                    state["balance"] -= int(amount)
                case ["withdraw", _]:
                    return "insufficient"
                case ["rename", *words]:
                    state["name"] = " ".join(words)
                case ["quit" | "exit"]:
                    return "bye"
                case []:
                    return "empty"
                case _:
                    return f"unknown: {cmd}"
            return "ok"

        def run():
            state = {"balance": 0, "name": ""}
            cmds = ["deposit 50", "withdraw 80", "withdraw 20", "rename Main Account", "", "fly", "exit"]
            return [[execute(c, state) for c in cmds], state]
    """,
    "collect_errors_while_validating": """
        def validate(record):
            errors = []
            if not record.get("name"):
                errors.append("name missing")
            try:
                age = int(record.get("age", ""))
                if age < 0:
                    raise ValueError("negative")
            except ValueError as e:
                errors.append(f"age: {e}")
            return errors

        def run():
            records = [{"name": "ann", "age": "31"}, {"age": "x"}, {"name": "bo", "age": "-4"}, {"name": "cy"}]
            return {i: validate(r) for i, r in enumerate(records)}
    """,
    "vending_machine_state_class": """
        class VendingMachine:
            PRICES = (("A1", 65), ("A2", 100), ("B1", 150))

            def __init__(self):
                self.credit = 0
                self.sales = []

            def insert(self, coin):
                if coin not in (5, 10, 25, 100):
                    return coin
                self.credit += coin
                return 0

            def select(self, code):
                price = dict(self.PRICES).get(code)
                if price is None or price > self.credit:
                    return None
                self.credit -= price
                self.sales.append(code)
                change, self.credit = self.credit, 0
                return change

        def run():
            vm = VendingMachine()
            rejected = [vm.insert(c) for c in [25, 25, 3, 25]]
            return [rejected, vm.select("A2"), vm.select("A1"), vm.credit, vm.sales]
    """,
    "priority_queue_bisect_tasks": """
        import bisect

        class TaskQueue:
            def __init__(self):
                self.items = []
                self.seq = 0

            def push(self, priority, task):
                bisect.insort(self.items, (-priority, self.seq, task))
                self.seq += 1

            def pop(self):
                _, _, task = self.items.pop(0)
                return task

        def run():
            q = TaskQueue()
            for prio, task in [(1, "log"), (5, "pay"), (3, "mail"), (5, "settle"), (0, "gc")]:
                q.push(prio, task)
            return [q.pop() for _ in range(len(q.items))]
    """,
    "bit_tricks_and_popcount": """
        def run():
            xs = [0, 1, 6, 255, 1023, 2 ** 64 - 1]
            return [[x.bit_count() for x in xs], [bin(x).count("1") for x in xs],
                    [x & -x for x in [12, 40, 1]], [(x & (x - 1)) == 0 for x in [1, 6, 64, 100]],
                    (2 ** 70).bit_length(), int.from_bytes(b"\\x01\\x00", "big"), (513).to_bytes(2, "little")]
    """,
    "string_methods_cleanup": """
        def slug(title):
            kept = "".join(c if c.isalnum() else " " for c in title.lower())
            return "-".join(kept.split())

        def run():
            titles = ["Hello, World!", "  Actor   VM 2.0  ", "Ünïcode Title"]
            return [[slug(t) for t in titles], "abc".center(9, "*"), "42".zfill(6), "-42".zfill(6),
                    "a,b,,c".split(","), "a b  c".split(), "k=v=w".partition("="), "k=v=w".rpartition("="),
                    "x\\ty".expandtabs(4), "Straße".casefold(), "tab\\tsep".title(), "ab" * 3]
    """,
    "str_translate_and_maketrans": """
        def run():
            table = str.maketrans("abc", "xyz", "!")
            leet = str.maketrans({"e": "3", "o": "0", "l": "1"})
            return ["aabbcc!!".translate(table), "hello world".translate(leet),
                    "Hello".swapcase(), "snake_case_name".replace("_", " ").title().replace(" ", "")]
    """,
    "dict_methods_everyday": """
        def run():
            scores = {"ann": 3, "bob": 5}
            scores.setdefault("cy", 0)
            scores.setdefault("ann", 99)
            merged = scores | {"bob": 6, "dan": 1}
            merged |= {"ed": 2}
            last = merged.popitem()
            inverted = {v: k for k, v in merged.items()}
            return [scores, merged, last, inverted, sorted(merged, key=merged.get, reverse=True),
                    list(reversed(merged)), {**scores, "z": 0}]
    """,
    "list_slicing_edits": """
        def run():
            xs = list(range(10))
            xs[2:5] = ["a", "b"]
            del xs[::3]
            ys = xs[:]
            ys[1:1] = [100, 200]
            ys.reverse()
            zs = [0] * 3 + [1] * 2
            del zs[1]
            return [xs, ys, zs, xs[-3:], xs[::-2], ys.index(100)]
    """,
    "percent_and_format_reports": """
        def run():
            rows = [("ann", 1234, 3), ("bob", 7, 12)]
            a = ["%-5s|%6d|%03d" % r for r in rows]
            b = ["{:>5}|{:<6}|{:^5}".format(*r) for r in rows]
            c = "%(name)s owes %(amount)d" % {"name": "cy", "amount": 42}
            d = "{who} paid {n:,}".format_map({"who": "di", "n": 10 ** 6})
            e = format(255, "#06x") + " " + format(-7, "+d") + " " + format(12, "b")
            return [a, b, c, d, e]
    """,
    "global_config_rebound_in_function": """
        RATE = 3

        def set_rate(r):
            global RATE
            RATE = r

        def fee(amount):
            return amount * RATE // 100

        def run():
            before = fee(1000)
            set_rate(7)
            return [before, fee(1000), RATE]
    """,
    "keyword_only_and_varargs": """
        def order(item, *extras, qty=1, express=False, **notes):
            price = 10 * qty + 2 * len(extras) + (5 if express else 0)
            return {"item": item, "extras": list(extras), "qty": qty, "price": price, "notes": notes}

        def clamp(x, /, lo=0, hi=100):
            return max(lo, min(x, hi))

        def run():
            return [order("pizza"), order("pizza", "olives", "ham", qty=2, express=True, door="back"),
                    clamp(150), clamp(-5, lo=-3), clamp(50, hi=10)]
    """,
    "iterator_class_and_next_default": """
        class Countdown:
            def __init__(self, start):
                self.n = start

            def __iter__(self):
                return self

            def __next__(self):
                if self.n <= 0:
                    raise StopIteration
                self.n -= 1
                return self.n + 1

        def run():
            it = iter([1, 2])
            return [list(Countdown(4)), next(it), next(it), next(it, "done"),
                    sum(Countdown(100)), [x for x in Countdown(3) if x != 2]]
    """,
    "zip_strict_and_map_many": """
        def run():
            names = ["ann", "bob"]
            amounts = [5, 7]
            out = [list(zip(names, amounts, strict=True)), list(map(lambda a, b: a * b, [1, 2, 3], [4, 5, 6]))]
            try:
                list(zip(names, [1], strict=True))
            except ValueError as e:
                out.append(str(e))
            return out
    """,
    "pow_modular_inverse_and_crt": """
        def crt(remainders, moduli):
            total, prod = 0, 1
            for m in moduli:
                prod *= m
            for r, m in zip(remainders, moduli):
                p = prod // m
                total += r * p * pow(p, -1, m)
            return total % prod

        def run():
            p = 2 ** 61 - 1
            return [pow(3, 200, p), pow(7, -1, 13), crt([2, 3, 2], [3, 5, 7]),
                    pow(2, 10), pow(-2, 3), divmod(-17, 5), -17 % 5]
    """,
}

# More of the issue's constructs, each in another everyday setting.
MORE_REAL = {
    "serializer_registry_class_decorator": """
        SERIALIZERS = {}

        def serializer(cls):
            SERIALIZERS[cls.tag] = cls()
            return cls

        @serializer
        class Csv:
            tag = "csv"

            def dump(self, rows):
                return "\\n".join(",".join(str(v) for v in r) for r in rows)

        @serializer
        class Pipe:
            tag = "pipe"

            def dump(self, rows):
                return "\\n".join("|".join(str(v) for v in r) for r in rows)

        def run():
            rows = [("a", 1), ("b", 22)]
            return {tag: s.dump(rows) for tag, s in sorted(SERIALIZERS.items())}
    """,
    "base_exception_cleanup_reraise": """
        class Halt(BaseException):
            pass

        def worker(jobs, log):
            for job in jobs:
                try:
                    if job == "halt":
                        raise Halt(job)
                    log.append(f"did {job}")
                except BaseException:
                    log.append("cleanup")
                    raise

        def run():
            log = []
            try:
                worker(["a", "b", "halt", "c"], log)
            except Halt as h:
                log.append(f"halted by {h}")
            return [log, issubclass(Halt, Exception), issubclass(KeyError, BaseException)]
    """,
    "unicode_decode_fallback_latin1": """
        def to_text(blob):
            try:
                return blob.decode("utf-8"), "utf-8"
            except UnicodeDecodeError as err:
                return blob.decode("latin-1"), f"latin-1 (byte {err.object[err.start]:#x} at {err.start})"

        def run():
            return [to_text(b"na\\xc3\\xafve"), to_text(b"na\\xefve"), to_text(b"")]
    """,
    "ascii_conversion_in_fstrings": """
        def run():
            users = ["zoë", "bob", "Ωmega"]
            lines = [f"user {u!a}" for u in users]
            extra = [ascii({"k": "ü"}), ascii(b"\\xff"), ascii(12)]
            return lines + extra
    """,
    "lottery_odds_math_perm": """
        import math

        def run():
            draws = [(49, 6), (10, 3), (5, 5), (5, 0)]
            ordered = [math.perm(n, k) for n, k in draws]
            unordered = [math.comb(n, k) for n, k in draws]
            return [ordered, unordered, [o // u for o, u in zip(ordered, unordered)], math.perm(3, 5)]
    """,
    "urlsafe_ids_roundtrip": """
        import base64

        def make_id(n):
            raw = n.to_bytes(8, "big")
            return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

        def read_id(text):
            padded = text + "=" * (-len(text) % 4)
            return int.from_bytes(base64.urlsafe_b64decode(padded), "big")

        def run():
            nums = [0, 255, 2 ** 63 - 1, 0xfbff_ffff_ffff_fffe]
            ids = [make_id(n) for n in nums]
            return [ids, [read_id(i) for i in ids] == nums]
    """,
    "json_indent_sort_keys_config_file": """
        import json

        def run():
            config = {"node": {"port": 8545, "peers": ["a", "b"]}, "log": "info", "limits": {}}
            text = json.dumps(config, indent=2, sort_keys=True)
            return [text.splitlines(), json.loads(text) == config]
    """,
    "module_instance_counter_object": """
        class Metrics:
            def __init__(self):
                self.calls = 0
                self.by_kind = {}

            def hit(self, kind):
                self.calls += 1
                self.by_kind[kind] = self.by_kind.get(kind, 0) + 1

        METRICS = Metrics()

        def handle(kind):
            METRICS.hit(kind)
            return kind.upper()

        def run():
            out = [handle(k) for k in ["get", "put", "get"]]
            return [out, METRICS.calls, METRICS.by_kind]
    """,
    "functools_cache_deep_fib": """
        import functools

        @functools.cache
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

        def run():
            return [fib(150), fib(10)]
    """,
    "future_annotations_with_type_checking": """
        from __future__ import annotations

        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from collections.abc import Iterable

        def total(xs: Iterable[int]) -> int:
            return sum(xs)

        class Wallet:
            def merge(self, other: Wallet) -> Wallet:
                return self

        def run():
            w = Wallet()
            return [total([1, 2, 3]), w.merge(w) is w]
    """,
}

# Everyday Python the issue's list does not name, which the VM refuses today
# (listed in FOUND below).
BEYOND_THE_ISSUE = {
    "membership_in_every_kind_of_container": """
        class Bag:
            def __init__(self, items):
                self.items = items

            def __iter__(self):
                return iter(self.items)

        class Picky:
            def __contains__(self, item):
                return item == "yes"

        class Old:
            def __getitem__(self, index):
                if index > 3:
                    raise IndexError(index)
                return index * 10

        class Stack(list):
            pass

        def run():
            it = iter([1, 2, 3, 4])
            found = 2 in it
            rest = list(it)
            gen = (n * n for n in range(10))
            squares = [9 in gen, 10 in gen, list(gen)]
            table = {"a": 1, "b": 2}
            checks = [2 in [1, 2], 5 not in (1, 2), "ell" in "hello", b"l" in b"hello",
                      108 in bytearray(b"hello"), 1 in table.values(), "a" in table.keys(),
                      ("a", 1) in table.items(), 3 in range(0, 10, 3), True in range(2),
                      2 in Bag([1, 2]), 7 in Bag([]), "yes" in Picky(), "no" in Picky(),
                      20 in Old(), 25 in Old(), 3 in Stack([3]), 3 in map(abs, [-3]),
                      (1, 2) in zip([1], [2]), 0 in enumerate([5]), 1 in {1, 2},
                      1 in frozenset([1]), None in [None]]
            errors = []
            for container in (5, None, object()):
                try:
                    errors.append(1 in container)
                except TypeError:
                    errors.append("TypeError")
            return [found, rest, squares, checks, errors]
    """,
    "while_loops_break_continue_else_and_generators": """
        def countdown(n):
            while n:
                yield n
                n -= 1

        def collatz(k):
            steps = 0
            while k != 1:
                k = k // 2 if k % 2 == 0 else 3 * k + 1
                steps += 1
            return steps

        def run():
            out = []
            i = 0
            while True:
                i += 1
                if i % 3 == 0:
                    continue
                if i > 10:
                    break
                out.append(i)
            found = None
            for limit in (5, 50):
                j = 0
                while j < limit:
                    j += 7
                    if j == 21:
                        found = limit
                        break
                else:
                    out.append(-j)
            rows = []
            data = [3, 1, 2]
            while (item := data.pop() if data else None) is not None:
                inner = 0
                while inner < item:
                    inner += 1
                    if inner == 2:
                        continue
                    rows.append((item, inner))
            while False:
                out.append("never")
            return [out, found, rows, list(countdown(4)), [collatz(k) for k in (1, 6, 27)]]
    """,
    "isinstance_tuples_unions_subclasses_and_stand_ins": """
        class Money(int):
            pass

        class Tags(list):
            pass

        def kinds(value):
            return [isinstance(value, int), isinstance(value, str), isinstance(value, (list, tuple)),
                    isinstance(value, (bool, (dict, set))), isinstance(value, (bytes, bytearray, frozenset)),
                    isinstance(value, int | None), isinstance(value, type), isinstance(value, object)]

        def run():
            values = [3, True, Money(5), "s", b"b", bytearray(b"x"), [1], Tags(), (1,), {"k": 1},
                      {1}, frozenset(), None, int, str, Money]
            return [kinds(v) for v in values] + [issubclass(Money, int), issubclass(bool, (str, int)),
                                                 issubclass(Tags, list), issubclass(int, object)]
    """,
    "str_and_int_conversions_every_form": """
        class Celsius:
            def __init__(self, degrees):
                self.degrees = degrees

            def __str__(self):
                return f"{self.degrees} C"

            def __int__(self):
                return int(self.degrees)

        class Slot:
            def __index__(self):
                return 7

        def attempt(convert, *args, **kwargs):
            try:
                return convert(*args, **kwargs)
            except (ValueError, TypeError) as error:
                return type(error).__name__ + ": " + str(error)

        def run():
            texts = [str(), str(42), str(-3.5), str(True), str(None), str([1, "a"]),
                     str(Celsius(21.5)), str(b"caf\\xc3\\xa9", "utf-8"), str(b"ab", encoding="ascii"),
                     str(b"\\xff", "utf-8", "replace"), str("same"), str(2 ** 70)]
            ints = [int(), int(" 12 "), int("-0"), int("1_000"), int("ff", 16), int("0x1f", 0),
                    int("z", 36), int(3.99), int(-3.99), int(True), int(Celsius(36.6)), int(2 ** 70)]
            errors = [attempt(int, "x"), attempt(int, "12", 1), attempt(int, 1.5, 10),
                      attempt(int, Slot()), attempt(str, 1, "utf-8"), attempt(int, [])]
            return [texts, ints, errors]
    """,
    "guarded_int_arithmetic_signs_and_word_edges": """
        def table(values, ops):
            out = []
            for a in values:
                for b in values:
                    for op in ops:
                        try:
                            out.append(op(a, b))
                        except ZeroDivisionError as error:
                            out.append(str(error))
            return out

        def run():
            edge = 2 ** 63
            values = [-7, -3, -1, 0, 1, 3, 7, edge - 1, -edge, edge, -edge - 1]
            ops = [
                lambda a, b: a + b,
                lambda a, b: a - b,
                lambda a, b: a * b,
                lambda a, b: a // b,
                lambda a, b: a % b,
            ]
            total = 0
            for a in values:
                total += a
                total -= a // 3 if a else 1
                total *= -1
            return [table(values, ops), total]
    """,
    "deadline_timeout_error": """
        def run_until(deadline, steps):
            done = []
            for height, job in steps:
                if height > deadline:
                    raise TimeoutError(f"{job} at {height} after deadline {deadline}")
                done.append(job)
            return done

        def run():
            try:
                return run_until(10, [(1, "a"), (5, "b"), (12, "c")])
            except TimeoutError as e:
                return ["timeout", str(e)]
    """,
    "generator_cleanup_generator_exit": """
        def reader(log):
            try:
                for i in range(100):
                    yield i * i
            except GeneratorExit:
                log.append("closed early")
                raise
            finally:
                log.append("released")

        def run():
            log = []
            g = reader(log)
            first = [next(g) for _ in range(3)]
            g.close()
            return [first, log]
    """,
    "typeddict_config_annotation": """
        from typing import TypedDict

        class NodeConfig(TypedDict):
            port: int
            peers: list

        def describe(cfg: NodeConfig) -> str:
            return f"{cfg['port']}:{len(cfg['peers'])}"

        def run():
            cfg: NodeConfig = {"port": 30303, "peers": ["a", "b"]}
            return describe(cfg)
    """,
    "value_object_hash_of_tuple": """
        class Point:
            def __init__(self, x, y):
                self.x, self.y = x, y

            def __eq__(self, other):
                return (self.x, self.y) == (other.x, other.y)

            def __hash__(self):
                return hash((self.x, self.y))

        def run():
            visited = {Point(0, 0), Point(1, 2), Point(0, 0)}
            return [len(visited), Point(1, 2) in visited, Point(2, 1) in visited]
    """,
    "class_attribute_instance_counter": """
        class Order:
            next_id = 1

            def __init__(self, item):
                self.id = Order.next_id
                Order.next_id += 1
                self.item = item

        def run():
            orders = [Order(x) for x in ["tea", "cake", "jam"]]
            return [[(o.id, o.item) for o in orders], Order.next_id]
    """,
    "repr_with_type_name": """
        class Money:
            def __init__(self, amount, currency):
                self.amount, self.currency = amount, currency

            def __repr__(self):
                return f"{type(self).__name__}({self.amount!r}, {self.currency!r})"

        class Fee(Money):
            pass

        def run():
            return [repr(Money(5, "EUR")), repr(Fee(1, "TOK"))]
    """,
    "enum_members_listing": """
        from enum import Enum

        class Role(Enum):
            OWNER = "owner"
            ADMIN = "admin"
            USER = "user"

        def run():
            return [list(Role.__members__), [m.value for m in Role.__members__.values()]]
    """,
    "dijkstra_with_heapq": """
        import heapq

        def shortest(graph, src):
            dist = {src: 0}
            heap = [(0, src)]
            while heap:
                d, node = heapq.heappop(heap)
                if d > dist[node]:
                    continue
                for nxt, w in graph.get(node, ()):
                    if d + w < dist.get(nxt, 10 ** 18):
                        dist[nxt] = d + w
                        heapq.heappush(heap, (d + w, nxt))
            return sorted(dist.items())

        def run():
            g = {"a": [("b", 4), ("c", 1)], "c": [("b", 2), ("d", 7)], "b": [("d", 1)]}
            return shortest(g, "a")
    """,
    "snapshot_with_deepcopy": """
        import copy

        def run():
            state = {"balances": {"ann": 5}, "log": [["mint", 5]]}
            before = copy.deepcopy(state)
            state["balances"]["ann"] -= 2
            state["log"].append(["burn", 2])
            shallow = copy.copy(state)
            return [before, state, shallow["log"] is state["log"]]
    """,
    "contextmanager_decorator": """
        from contextlib import contextmanager

        @contextmanager
        def section(log, name):
            log.append(f"<{name}>")
            try:
                yield len(log)
            finally:
                log.append(f"</{name}>")

        def run():
            log = []
            with section(log, "a") as depth:
                with section(log, "b"):
                    log.append(str(depth))
            return log
    """,
    "config_layers_chainmap": """
        from collections import ChainMap

        def run():
            defaults = {"port": 80, "host": "localhost", "debug": False}
            env = {"port": 8080}
            cli = {"debug": True}
            cfg = ChainMap(cli, env, defaults)
            return [dict(sorted(cfg.items())), cfg["port"], cfg.maps[1]]
    """,
}

REAL_PROGRAMS = {
    "zero_division_messages_on_every_path": """
        from enum import IntEnum

        class Level(IntEnum):
            LOW = 1

        class Big(int):
            pass

        def run():
            out = []
            z = 0

            def attempt(f):
                try:
                    f()
                except ZeroDivisionError as e:
                    out.append(str(e))

            x = 7
            for f in (lambda: x // z, lambda: x % z, lambda: divmod(x, z), lambda: True // z,
                      lambda: True % z, lambda: Level.LOW // z, lambda: Big(5) % z,
                      lambda: (2 ** 100) // z, lambda: x // 0):
                attempt(f)
            y = 9
            try:
                y //= z
            except ZeroDivisionError as e:
                out.append(str(e))
            return out
    """,
    **MODULE_STATE,
    **AUGMENTED,
    **STARRED,
    **CHAINED,
    **FSTRING_SPECS,
    **MODULE_IFS,
    **SLOTS,
    **LIBRARY,
    **INTROSPECTION,
    **IDENTITY,
    **RECURSION,
    **EVERYDAY,
    **MORE_REAL,
    **BEYOND_THE_ISSUE,
}

#: Programs the VM refuses today for one of issue #30's constructs, with the
#: VM's error. The test runs them as non-strict expected failures; remove a
#: name once its construct lands.
PENDING: list = []

#: Programs the VM refuses today for a reason issue #30's list does not name
#: (a missing builtin, a library gap, a refusal of everyday Python). Also run
#: as non-strict expected failures.
FOUND: list = []

assert len(set(PENDING)) == len(PENDING) and len(set(FOUND)) == len(FOUND)
assert not set(PENDING) & set(FOUND), "a program is either pending or found"
assert set(PENDING) | set(FOUND) <= set(REAL_PROGRAMS), "unknown program name"
