# imports: pprint
# expect: logs the snippet's write was called 0 times
# Storing a function as the stream's write made pprint (and any library writing to sys.stdout)
# call the snippet's function, outside the logs and max_output_bytes. The snippet's stdout
# takes no stores, and what pprint writes to it is in the logs.
import pprint
s = pprint.PrettyPrinter()._stream
calls = []
def w(x):
    calls.append(x)
    return len(x)
try:
    s.write = w
except AttributeError:
    pass
pprint.pprint({'printed': 'by pprint'})
print("the snippet's write was called", len(calls), 'times')
