# expect: refused Forbidden access to threading.Condition._is_owned: module threading is not allowed
# Called at once (obj.name(...), the walk's fast path for method calls), the method gets the
# check it gets when read as a value (158).
import queue
queue.Queue().not_empty._is_owned()
