# %% [markdown]
# A percent-format script: premortem checks its cells like a notebook's.

# %%
total = count + 1

# %%
count = 41
