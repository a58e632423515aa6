# expect: native
# Using final_answer as a value (passing it, calling it through another name) is fine.
done = final_answer
def finish(fn, value):
    fn(value)
finish(done, {'answer': 42})
