try:
    final_answer('done')
except Exception:
    print('should not catch')
'after'
