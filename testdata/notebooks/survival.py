# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Survival analysis 🚢
#
# Load the passengers, then fit a model — 模型.

# %%
import pandas as pd
from sklearn.linear_model import LogisticRegression

df = pd.read_csv("passengers.csv")

# %% tags=["parameters"]
target = "Survived"

# %%
# %%time is a magic in a comment, not a cell marker
X = df[["Age", "Fare"]].fillna(0)

# %% [markdown]
# Fit, then score.

# %%
model = LogisticRegression().fit(X, df[target])
print(f"accuracy: {model.score(X, df[target]):.2f} ✅")
