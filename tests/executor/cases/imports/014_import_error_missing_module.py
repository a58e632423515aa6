# imports: no_such_module_xyz
# expect: native
import no_such_module_xyz
