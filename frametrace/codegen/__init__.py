"""LLVM code generation: the JIT engine, kernel emitters and the vector math library."""
