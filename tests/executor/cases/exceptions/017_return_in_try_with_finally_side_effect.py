state = []
def f():
    try:
        state.append('try')
        return len(state)
    finally:
        state.append('finally')
(f(), state)
