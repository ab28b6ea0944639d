"""Dashboard view models: plain data for each section's template, built from one run or several."""
