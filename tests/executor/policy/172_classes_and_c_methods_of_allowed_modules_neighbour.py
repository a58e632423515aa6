# expect: native
# Classes of builtins, of allowed modules and of the snippet itself, and their C methods, are
# used as before; a C method is found by its defining class even where a subclass shadows its
# name (super), and a class made by type() is the snippet's.
import re, collections, datetime, queue, random, statistics, itertools, time, unicodedata
class L(list):
    append = 5
l = L()
super(L, l).append(1)
extend = super(L, l).extend
extend([2, 3])
d = collections.deque(); d.append(1); d.appendleft(0)
od = collections.OrderedDict(a=1); od.move_to_end('a')
print(re.I.bit_length(), dict.fromkeys('ab'), datetime.datetime(2020, 1, 1).isoformat(), queue.Queue().qsize())
print(type(re.compile('a')), type(re.match('a', 'a')), type(datetime.timezone.utc), random.Random(1).random())
print(type(collections.Counter()), type(d), int.from_bytes(b'\x01', 'big'), L.mro(), list.append)
T = type('T', (), {'x': 1})
print(T().x, isinstance(l, list), type(time.localtime()), unicodedata.ucd_3_2_0.name('a'), type(unicodedata.ucd_3_2_0))
print(list(itertools.chain.from_iterable([[1], [2]])), type(itertools.count()), statistics.NormalDist(0, 1).cdf(0))
try:
    statistics.mean([])
except statistics.StatisticsError as e:
    print(type(e), e.with_traceback(None) is e)
(l, od, type(queue.Queue()), queue.Queue().mutex is not None, type({}.keys()), queue.Empty)
