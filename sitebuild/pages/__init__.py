"""The lesson pages: lessons parsed, rendered to HTML, their fences, maths, numbers and notebook."""
