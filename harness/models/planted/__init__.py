"""The planted-truth backend (``planted:``): answers drawn from a declared response curve."""
