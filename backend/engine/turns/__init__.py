"""What one turn is made of: the prompt builder, context, bootstrap files, memory, the mode switch and
tool selection. Built on `engine.models`; the loop and the runner (in `engine`) use it."""
