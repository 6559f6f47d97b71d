"""`ragdown doctor`: checks of an install and its folders, one line each (docs/doctor.md)."""
