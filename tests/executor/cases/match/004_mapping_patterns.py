def cmd(c):
    match c:
        case {'action': 'move', 'x': x, 'y': y}:
            return 'move to %d,%d' % (x, y)
        case {'action': 'say', 'text': str(t), **rest}:
            return 'say %s extra=%s' % (t, sorted(rest))
        case {'action': a}:
            return 'unknown ' + a
        case _:
            return 'invalid'
[cmd(c) for c in ({'action': 'move', 'x': 1, 'y': 2, 'z': 0}, {'action': 'say', 'text': 'hi', 'v': 1}, {'action': 'jump'}, {})]
