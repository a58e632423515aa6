print('flushed', flush=True)
print('to default', file=None)
'ok'
