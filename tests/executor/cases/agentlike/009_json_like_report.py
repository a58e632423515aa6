# imports: json
import json
orders = [{'id': 1, 'items': [{'sku': 'a', 'qty': 2, 'price': 3.5}, {'sku': 'b', 'qty': 1, 'price': 10}]},
          {'id': 2, 'items': [{'sku': 'a', 'qty': 5, 'price': 3.5}]}]
totals = {o['id']: round(sum(i['qty'] * i['price'] for i in o['items']), 2) for o in orders}
skus = sorted({i['sku'] for o in orders for i in o['items']})
report = {'totals': totals, 'skus': skus, 'grand': sum(totals.values())}
print(json.dumps(report, sort_keys=True))
report
