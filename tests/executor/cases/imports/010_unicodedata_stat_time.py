import unicodedata
import stat
import time
print(unicodedata.decimal('7'), stat.S_ISDIR(stat.S_IFDIR), stat.filemode(0o100644))
t0 = time.time()
t1 = time.monotonic()
print(t0 > 1e9, isinstance(t1, float), time.gmtime(0).tm_year, time.strftime('%Y', time.gmtime(86400 * 366)))
'ok'
