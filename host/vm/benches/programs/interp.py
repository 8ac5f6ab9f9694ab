# interp: a small stack-machine interpreter - a bytecode program (loops, calls, arithmetic) run by method dispatch through a dict.
# bench: n = 1000


def assemble(text):
    code = []
    labels = {}
    lines = [line.strip() for line in text.strip().split("\n")]
    for line in lines:
        if line.endswith(":"):
            labels[line[:-1]] = len(code)
        elif line:
            op, _, arg = line.partition(" ")
            code.append((op, arg))
    resolved = []
    for op, arg in code:
        if op in ("jmp", "jz", "call"):
            resolved.append((op, labels[arg]))
        elif op in ("push",):
            resolved.append((op, int(arg)))
        else:
            resolved.append((op, arg))
    return tuple(resolved)


SOURCE = """
    push 0
    store total
    push 0
    store i
loop:
    load i
    load n
    lt
    jz done
    load i
    call square
    load total
    add
    push 1000003
    mod
    store total
    load i
    push 1
    add
    store i
    jmp loop
done:
    load total
    halt
square:
    dup
    mul
    push 7
    add
    ret
"""


class Machine:
    def __init__(self, code):
        self.code = code
        self.stack = []
        self.frames = []
        self.env = {}
        self.steps = 0

    def op_push(self, arg, pc):
        self.stack.append(arg)
        return pc + 1

    def op_load(self, arg, pc):
        self.stack.append(self.env[arg])
        return pc + 1

    def op_store(self, arg, pc):
        self.env[arg] = self.stack.pop()
        return pc + 1

    def op_dup(self, arg, pc):
        self.stack.append(self.stack[-1])
        return pc + 1

    def op_add(self, arg, pc):
        stack = self.stack
        b = stack.pop()
        stack[-1] += b
        return pc + 1

    def op_mul(self, arg, pc):
        stack = self.stack
        b = stack.pop()
        stack[-1] *= b
        return pc + 1

    def op_mod(self, arg, pc):
        stack = self.stack
        b = stack.pop()
        stack[-1] %= b
        return pc + 1

    def op_lt(self, arg, pc):
        b = self.stack.pop()
        a = self.stack.pop()
        self.stack.append(1 if a < b else 0)
        return pc + 1

    def op_jmp(self, arg, pc):
        return arg

    def op_jz(self, arg, pc):
        return arg if self.stack.pop() == 0 else pc + 1

    def op_call(self, arg, pc):
        self.frames.append(pc + 1)
        return arg

    def op_ret(self, arg, pc):
        return self.frames.pop()

    def execute(self, n):
        self.env["n"] = n
        dispatch = {
            "push": self.op_push, "load": self.op_load, "store": self.op_store,
            "dup": self.op_dup, "add": self.op_add, "mul": self.op_mul,
            "mod": self.op_mod, "lt": self.op_lt, "jmp": self.op_jmp,
            "jz": self.op_jz, "call": self.op_call, "ret": self.op_ret,
        }
        code = self.code
        pc = 0
        while True:
            op, arg = code[pc]
            if op == "halt":
                return self.stack.pop()
            self.steps += 1
            pc = dispatch[op](arg, pc)


@actor
class Actor:
    def run(self, n):
        machine = Machine(assemble(SOURCE))
        result = machine.execute(n)
        return [result, machine.steps, len(machine.env)]
