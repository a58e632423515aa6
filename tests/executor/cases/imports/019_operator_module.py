# imports: operator
import operator
print(operator.add(1, 2), operator.itemgetter(1)([5, 6]), sorted([(1, 'b'), (2, 'a')], key=operator.itemgetter(1)))
print(list(map(operator.mul, [1, 2], [3, 4])), operator.attrgetter('real')(3 + 4j))
operator.neg(5)
