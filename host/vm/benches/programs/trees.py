# trees: recursive generators - a binary search tree walked with yield from, leaf paths, generated permutations, a generator pipeline.
# bench: n = 1500


class Node:
    def __init__(self, key):
        self.key = key
        self.left = None
        self.right = None


def insert(root, key):
    if root is None:
        return Node(key)
    node = root
    while True:
        if key < node.key:
            if node.left is None:
                node.left = Node(key)
                return root
            node = node.left
        elif key > node.key:
            if node.right is None:
                node.right = Node(key)
                return root
            node = node.right
        else:
            return root


def inorder(node):
    if node is not None:
        yield from inorder(node.left)
        yield node.key
        yield from inorder(node.right)


def leaf_depths(node, depth):
    if node.left is None and node.right is None:
        yield depth
        return
    for child in (node.left, node.right):
        if child is not None:
            yield from leaf_depths(child, depth + 1)


def permutations(items):
    if len(items) <= 1:
        yield items
        return
    for i in range(len(items)):
        rest = items[:i] + items[i + 1:]
        for tail in permutations(rest):
            yield [items[i]] + tail


def window_sums(values, size):
    window = []
    total = 0
    for v in values:
        window.append(v)
        total += v
        if len(window) > size:
            total -= window.pop(0)
        if len(window) == size:
            yield total


@actor
class Actor:
    def run(self, n):
        root = None
        seed = 7
        for _ in range(n):
            seed = (seed * 1103515245 + 12345) % 2147483648
            root = insert(root, seed % (10 * n))
        keys = list(inorder(root))
        ordered = all(a < b for a, b in zip(keys, keys[1:]))
        depths = list(leaf_depths(root, 0))
        thirds = sum(k for k in inorder(root) if k % 3 == 0)
        peak = max(window_sums(inorder(root), 16))
        perms = 0
        for p in permutations([1, 2, 3, 4, 5, 6]):
            if p[0] < p[-1]:
                perms += p[1] * p[2]
        return [len(keys), ordered, max(depths), sum(depths), thirds, peak, perms]
