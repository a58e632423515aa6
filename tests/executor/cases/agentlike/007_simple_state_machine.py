transitions = {('idle', 'start'): 'running', ('running', 'pause'): 'paused',
               ('paused', 'start'): 'running', ('running', 'stop'): 'idle'}
state = 'idle'
history = [state]
for event in ['start', 'pause', 'start', 'bogus', 'stop']:
    nxt = transitions.get((state, event))
    if nxt is None:
        print(f'ignored {event!r} in {state}')
        continue
    state = nxt
    history.append(state)
history
