# particles: an integer (fixed-point) gravity simulation of bodies made of Vec objects with operator overloading.
# bench: n = 3

SCALE = 1024
WALL = 100000


class Vec:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def __sub__(self, other):
        return Vec(self.x - other.x, self.y - other.y)

    def __mul__(self, k):
        return Vec(self.x * k // SCALE, self.y * k // SCALE)

    def __eq__(self, other):
        return self.x == other.x and self.y == other.y

    def norm1(self):
        return abs(self.x) + abs(self.y)

    def __repr__(self):
        return f"Vec({self.x}, {self.y})"


class Body:
    def __init__(self, pos, vel, mass):
        self.pos = pos
        self.vel = vel
        self.mass = mass

    def kinetic(self):
        v = self.vel
        return self.mass * (v.x * v.x + v.y * v.y) // 2

    def bounce(self):
        p = self.pos
        v = self.vel
        if p.x > WALL or p.x < -WALL:
            v = Vec(-v.x, v.y)
        if p.y > WALL or p.y < -WALL:
            v = Vec(v.x, -v.y)
        self.vel = v


class World:
    def __init__(self, count, seed):
        self.bodies = []
        self.collisions = 0
        for i in range(count):
            seed = (seed * 1103515245 + 12345) % 2147483648
            x = seed % (2 * WALL) - WALL
            seed = (seed * 1103515245 + 12345) % 2147483648
            y = seed % (2 * WALL) - WALL
            self.bodies.append(Body(Vec(x, y), Vec(0, 0), 1 + i % 5))

    def step(self):
        bodies = self.bodies
        for a in bodies:
            acc = Vec(0, 0)
            for b in bodies:
                if a is b:
                    continue
                d = b.pos - a.pos
                dist = d.norm1()
                if dist < 500:
                    self.collisions += 1
                    dist = 500
                acc = acc + d * (b.mass * 2000 * SCALE // dist)
            a.vel = (a.vel + acc * 4) * (SCALE - 16)
        for a in bodies:
            a.pos = a.pos + a.vel * (SCALE // 8)
            a.bounce()

    def energy(self):
        return sum(b.kinetic() for b in self.bodies)


@actor
class Actor:
    def run(self, n):
        world = World(30, 2024)
        energies = []
        for _ in range(n):
            world.step()
            energies.append(world.energy())
        centre = Vec(0, 0)
        for b in world.bodies:
            centre = centre + b.pos
        return [energies[-1], max(energies), world.collisions, repr(centre)]
