"""The book as one SGF game tree (``fuseki book tree``): a joseki or fuseki dictionary for Sabaki.

``walk`` follows the book breadth-first from a position: each node's children are the next
moves ``Book.next_moves`` lists with at least ``min_games`` games (an orbit of symmetric points
is one child, on its first point), most games first, so that SGF's first variation is the main
line; ``walk_corner`` does the same with the corner book (``book.analysis.patterns.corners``) in one
corner of an otherwise empty board.  Positions are followed on the engine's ``Board``: a book
move illegal there (a ko just taken) is left out and counted.  ``max_nodes`` caps the tree:
once a node's children would pass it, no node is expanded any more and ``Tree.cut`` says so.

Each node may carry KataGo's values for the move (``book.analysis.ai.next_move_values`` on the stored
values of ``book.analysis.ai.AiValueStores``: never asked of KataGo).

``sgf_text`` writes the tree (our writer; the tests read it back with sgfmill): the moves from
the empty board to the start as the first nodes, then the tree; every comment (C) holds the
move's games and win rate for the player who played it and KataGo's values where stored; every
expanded node labels (LB) its next moves ``a``, ``b``, ... as ``fuseki search`` letters them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace

from fuseki.engine.core import base
from fuseki.engine.core.base import BLACK, COLOUR_LETTER, COLOUR_NAME, WHITE

MAX_NODES = 10_000  # the tree's nodes at most (fuseki book tree --max-nodes)
TOP_RIGHT = 1  # the corner of ``corners`` (bit 0 flips x) the corner tree is drawn in


@dataclass
class Node:
    """A move of the tree (the root: ``color`` 0, no move) and what the book says of it and after it."""

    color: int = 0
    point: int = base.PASS
    points: tuple[int, ...] = ()
    games: int = 0
    winrate: float = 0.0
    ai: object = None               # a book.analysis.ai.MoveValues, or None
    children: list[Node] = field(default_factory=list)
    expanded: bool = False          # the book was asked for its next moves
    total: int = 0                  # games of the position after it (corner: continuations)
    ended: int = 0                  # of those, games that ended there (corner: tenuki)
    fewer: tuple[int, int] = (0, 0)  # next moves under min_games: (moves, games)
    illegal: int = 0                # next moves illegal on the board, left out
    capped: bool = False            # not expanded because of max_nodes


@dataclass
class Tree:
    root: Node
    start: list[tuple[int, int]]    # (colour, point) from the empty board to the tree's first position
    size: int
    min_games: int
    depth: int
    corner: bool = False
    nodes: int = 0                  # nodes below the start
    cut: bool = False               # max_nodes stopped the walk
    illegal: int = 0                # book moves left out as illegal on the board
    notes: list[str] = field(default_factory=list)  # for the root comment


def walk(book, board, min_games: int, depth: int, max_nodes: int = MAX_NODES, stores=None,
         filters=None) -> Tree:
    """The whole-board tree from ``board``'s position (its ``moves`` are the start)."""
    from fuseki.book.model.filters import Filters

    filters = filters or Filters()
    every = replace(filters, min_games=1)  # then cut at min_games here (every other filter kept: within too)

    def next_of(here):
        found = book.next_moves(here, filters=every)
        fewer = [m for m in found.moves if m.games < min_games]
        return (here.to_move, [m for m in found.moves if m.games >= min_games], (found.total, found.ended),
                (len(fewer), sum(m.games for m in fewer)))

    return _walk(board, next_of, min_games, depth, max_nodes, stores, corner=False)


def walk_corner(book, size: int, min_games: int, depth: int, max_nodes: int = MAX_NODES,
                stores=None) -> Tree | None:
    """The corner book's tree from an empty top-right corner of an empty ``size`` board (Black
    first, the players alternating; tenuki is counted in the comments, not followed).  None
    when the book has no corner book."""
    from fuseki.book.analysis.patterns import corners
    from fuseki.engine.core.board import Board

    board = Board(size)
    if corners.of_book(book, board, BLACK) is None:
        return None

    def next_of(here):
        found = corners.of_book(book, here, here.to_move)
        corner = next((c for c in found if c.corner == TOP_RIGHT), None)
        if corner is None:  # a board without corners
            return here.to_move, [], (0, 0), (0, 0)
        fewer = [m for m in corner.moves if m.games < min_games]
        return (here.to_move, [m for m in corner.moves if m.games >= min_games], (corner.total, corner.tenuki),
                (len(fewer), sum(m.games for m in fewer)))

    return _walk(board, next_of, min_games, depth, max_nodes, stores, corner=True)


def _walk(board, next_of, min_games, depth, max_nodes, stores, corner: bool) -> Tree:
    tree = Tree(Node(), list(board.moves), board.size, min_games, depth, corner=corner)
    queue = deque([(tree.root, board, 0)])
    while queue:
        node, here, level = queue.popleft()
        if level >= depth:
            continue
        if tree.cut:
            node.capped = True
            continue
        to_move, moves, (node.total, node.ended), node.fewer = next_of(here)
        node.expanded = True
        children, boards = [], []
        for move in moves:
            if move.point != base.PASS and here.legal_reason(to_move, move.point) is not None:
                node.illegal += 1
                continue
            after = here.copy()
            after.play(to_move, move.point)
            children.append(Node(to_move, move.point, tuple(move.points), move.games, move.winrate))
            boards.append((move, after))
        if tree.nodes + len(children) > max_nodes:
            tree.cut, node.expanded, node.capped = True, False, True
            continue
        tree.illegal += node.illegal
        tree.nodes += len(children)
        node.children = children
        if stores is not None and children:
            _add_ai(stores, here, to_move, [m for m, _ in boards], children, corner)
        queue.extend((child, after, level + 1) for child, (_, after) in zip(children, boards))
    return tree


def _add_ai(stores, board, to_move: int, moves, children: list[Node], corner: bool) -> None:
    """KataGo's stored values of each child's move (a corner move: its one point on the board)."""
    from fuseki.book.analysis.ai import next_move_values, one_point_each

    values = stores.values(board, to_move)
    if values is None:
        return
    listed = one_point_each(moves) if corner else moves
    for child, found in zip(children, next_move_values(values, board, to_move, listed, stores.values)):
        child.ai = found


# --- the SGF text ---


def escape(text: str) -> str:
    """SGF text: ``\\`` and ``]`` escaped (FF[4]); everything else as it is."""
    return text.replace("\\", "\\\\").replace("]", "\\]")


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def percent(share: float) -> str:
    return f"{100 * share:.1f}%"


def move_line(node: Node, tree: Tree) -> str:
    """``Black Q16 or its 3 symmetric points: 5405 games, Black won 52.1%`` (a corner move: the
    games that played it in a corner like this one, ``corners.CornerMove.games``)."""
    vertex = base.point_to_vertex(node.point, tree.size)
    others = len(node.points) - 1
    orbit = f" or its {others} symmetric point{'s' if others > 1 else ''}" if others > 0 else ""
    who = COLOUR_NAME[node.color]
    return f"{who} {vertex}{orbit}: {plural(node.games, 'game')}, {who} won {percent(node.winrate)}"


def ai_line(node: Node) -> str | None:
    """KataGo's stored values of the move, for the player who played it; None without values."""
    from fuseki.book.analysis.ai import CHILD

    if node.ai is None:
        return None
    after = " (the stored values of the position after it)" if node.ai.source == CHILD else ""
    return (f"KataGo: {percent(node.ai.winrate)} win for {COLOUR_NAME[node.color]}, lead "
            f"{round(node.ai.score_lead, 1) + 0.0:.1f}, loss {round(node.ai.loss, 1) + 0.0:.1f} points{after}")


def position_lines(node: Node, tree: Tree, letters: str) -> list[str]:
    """What the book says of the position after ``node``: its games, the moves below, those left out."""
    if node.capped:
        return ["not followed: the tree reached its cap of nodes (--max-nodes) here"]
    if not node.expanded:
        return []
    if tree.corner:
        lines = [f"then: {node.total} continuations in the corner, tenuki {node.ended} times"]
    else:
        lines = [f"then: {plural(node.total, 'game')}" + (f", {node.ended} ended here" if node.ended else "")]
    shown = len(node.children)
    if shown:
        named = letters[: min(shown, len(letters))]
        lettered = f"{named[0]}-{named[-1]}" if len(named) > 1 else named
        if shown > len(letters):
            lettered += f": the first {len(letters)}"
        lines.append(f"{shown} move{'s' if shown > 1 else ''} of >= {tree.min_games} games below ({lettered})")
    if node.fewer[0]:
        lines.append(f"{node.fewer[0]} moves of fewer games ({node.fewer[1]} in all) left out")
    if node.illegal:
        lines.append(f"{node.illegal} book moves illegal on this board (ko) left out")
    return lines


def label_values(node: Node, size: int, letters: str) -> list[str]:
    """``pd:a`` for every point of the first ``len(letters)`` children, as ``fuseki search`` marks them."""
    marked: dict[int, str] = {}
    for letter, child in zip(letters, node.children):
        for point in child.points or (child.point,):
            if point != base.PASS:
                marked.setdefault(point, letter)
    return [f"{base.point_to_sgf(p, size)}:{letter}" for p, letter in marked.items()]


def node_text(node: Node, tree: Tree, letters: str, head: list[str] | None = None) -> str:
    """One node's properties: its move, comment and labels."""
    parts = []
    if node.color in (BLACK, WHITE):
        parts.append(f"{COLOUR_LETTER[node.color]}[{base.point_to_sgf(node.point, tree.size)}]")
    lines = list(head or [])
    if node.color in (BLACK, WHITE):
        lines.append(move_line(node, tree))
        lines += [line for line in (ai_line(node),) if line]
    lines += position_lines(node, tree, letters)
    if lines:
        parts.append(f"C[{escape(chr(10).join(lines))}]")
    labels = label_values(node, tree.size, letters)
    if labels:
        parts.append("LB" + "".join(f"[{value}]" for value in labels))
    return ";" + "".join(parts)


def sgf_text(tree: Tree, letters: str, title: list[str]) -> str:
    """The tree as one SGF game: the root (``title`` in its comment), the moves to the start,
    then every node, a node of several children opening one variation each (the first the most
    played).  Written without recursion: a deep tree needs no deep stack."""
    out = [f"(;GM[1]FF[4]CA[UTF-8]AP[fuseki]SZ[{tree.size}]"]
    here = tree.root
    if tree.start:
        out.append(f"C[{escape(chr(10).join(title))}]")
        for number, (color, point) in enumerate(tree.start, 1):
            if number < len(tree.start):
                out.append(f"\n;{COLOUR_LETTER[color]}[{base.point_to_sgf(point, tree.size)}]")
        color, point = tree.start[-1]
        out.append("\n" + _start_text(color, point, here, tree, letters))
    else:
        out.append(node_text(here, tree, letters, head=title)[1:])
    stack: list = []
    _push_children(stack, here)
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        out.append("\n" + node_text(item, tree, letters))
        _push_children(stack, item)
    out.append(")\n")
    return "".join(out)


def _start_text(color: int, point: int, root: Node, tree: Tree, letters: str) -> str:
    """The last move to the start: its move, then the start position's comment and labels."""
    move = f"{COLOUR_LETTER[color]}[{base.point_to_sgf(point, tree.size)}]"
    return ";" + move + node_text(root, tree, letters, head=["the tree starts here"])[1:]


def _push_children(stack: list, node: Node) -> None:
    if len(node.children) == 1:
        stack.append(node.children[0])
        return
    for child in reversed(node.children):  # popped first to last: "(", the child's subtree, ")"
        stack += [")", child, "\n("]

