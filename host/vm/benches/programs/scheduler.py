# scheduler: a round-robin task scheduler over small objects (tests/realprog.rs runs it too).
# bench: n = 300


class Task:
    def __init__(self, name, priority, cost):
        self.name = name
        self.priority = priority
        self.cost = cost
        self.done = 0

    def step(self, budget):
        used = min(budget, self.cost - self.done)
        self.done += used
        return used

    def finished(self):
        return self.done >= self.cost


class Scheduler:
    def __init__(self):
        self.tasks = []
        self.log = []

    def add(self, task):
        self.tasks.append(task)
        self.tasks.sort(key=lambda t: (-t.priority, t.name))

    def run(self, quantum):
        ticks = 0
        while self.tasks:
            task = self.tasks.pop(0)
            ticks += task.step(quantum)
            if task.finished():
                self.log.append(task.name)
            else:
                self.tasks.append(task)
        return ticks


@actor
class Actor:
    def run(self, n):
        s = Scheduler()
        for i in range(n):
            s.add(Task("t" + str(i), i % 5, 10 + i % 7))
        return s.run(3) + len(s.log)
