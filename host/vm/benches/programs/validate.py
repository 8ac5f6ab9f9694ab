# validate: exceptions in loops - a record parser raising a custom exception hierarchy, caught, chained and counted.
# bench: n = 2500


class ParseError(Exception):
    code = "parse"

    def __init__(self, line, message):
        super().__init__(message)
        self.line = line


class MissingField(ParseError):
    code = "missing"


class BadNumber(ParseError):
    code = "number"


class OutOfRange(ParseError):
    code = "range"

    def __init__(self, line, field, value):
        super().__init__(line, field + " out of range: " + str(value))
        self.field = field


class Tally:
    def __init__(self):
        self.entered = 0
        self.errors = {}

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, kind, value, traceback):
        if kind is not None and issubclass(kind, ParseError):
            self.errors[value.code] = self.errors.get(value.code, 0) + 1
            return True
        return False


def make_line(i):
    seed = (i * 2654435761) % 4294967296
    parts = ["id=" + str(i), "qty=" + str(seed % 120), "price=" + str(seed % 977)]
    if seed % 11 == 0:
        parts.pop(1)
    if seed % 13 == 0:
        parts.append("price=x" + str(i))
    if seed % 17 == 0:
        parts[0] = "id"
    return ";".join(parts)


def parse(number, line):
    fields = {}
    for part in line.split(";"):
        key, sep, value = part.partition("=")
        if not sep:
            raise ParseError(number, "missing '=' in " + repr(part))
        try:
            fields[key] = int(value)
        except ValueError as error:
            raise BadNumber(number, "bad number for " + key) from error
    for name in ("id", "qty", "price"):
        if name not in fields:
            raise MissingField(number, "no " + name)
    if fields["qty"] > 100:
        raise OutOfRange(number, "qty", fields["qty"])
    return fields


def checked_ratio(a, b):
    try:
        return a // b
    except ZeroDivisionError:
        return -1
    finally:
        pass


@actor
class Actor:
    def run(self, n):
        tally = Tally()
        total = 0
        chained = 0
        lookups = 0
        for i in range(n):
            line = make_line(i)
            with tally:
                try:
                    fields = parse(i, line)
                except ParseError as error:
                    if isinstance(error, BadNumber):
                        chained += 1
                    raise
                else:
                    total += checked_ratio(fields["price"], fields["qty"])
            try:
                lookups += {"0": 1, "5": 2, "7": 3}[line[-1]]
            except KeyError:
                lookups -= 1
        return [total, chained, lookups, tally.entered, sorted(tally.errors.items())]
