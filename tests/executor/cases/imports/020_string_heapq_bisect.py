# imports: string, heapq, bisect
import string
import heapq
import bisect
print(string.ascii_lowercase[:5], string.digits, string.capwords('hello there'))
h = [5, 1, 8, 3]
heapq.heapify(h)
print(heapq.heappop(h), heapq.nsmallest(2, [9, 4, 7]), heapq.nlargest(1, [9, 4, 7]))
a = [1, 3, 5]
bisect.insort(a, 4)
print(a, bisect.bisect_left(a, 4))
string.Template('$x-$y').substitute(x=1, y=2)
