package repair

import (
	"fmt"
	"sort"
	"strings"

	"github.com/premortem/premortem/finding"
)

// Missing import: a NameError on a name that is the conventional alias of a library
// (sns, np, plt...) or a well-known class or function (train_test_split, StandardScaler)
// gets the import inserted at the top of the cell. Every such name the cell uses and the
// kernel lacks is imported in the same fix, so no NameError is left behind for the next
// one (verification checks that none is).

func init() {
	register(family{name: "missing-import", gen: importGen})
}

// conventionalImports maps a name to the import statement that conventionally binds it.
var conventionalImports = map[string]string{
	"np": "import numpy as np", "pd": "import pandas as pd", "plt": "import matplotlib.pyplot as plt",
	"sns": "import seaborn as sns", "mpl": "import matplotlib as mpl", "tf": "import tensorflow as tf",
	"torch": "import torch", "nn": "import torch.nn as nn", "F": "import torch.nn.functional as F",
	"optim": "import torch.optim as optim", "sp": "import scipy as sp", "stats": "from scipy import stats",
	"sm": "import statsmodels.api as sm", "px": "import plotly.express as px", "go": "import plotly.graph_objects as go",
	"os": "import os", "re": "import re", "sys": "import sys", "json": "import json", "math": "import math",
	"random": "import random", "time": "import time", "datetime": "import datetime", "pickle": "import pickle",
	"collections": "import collections", "itertools": "import itertools", "glob": "import glob",
	"warnings": "import warnings", "Path": "from pathlib import Path", "Counter": "from collections import Counter",
	"defaultdict": "from collections import defaultdict", "tqdm": "from tqdm import tqdm",
	"sklearn": "import sklearn", "joblib": "import joblib", "xgb": "import xgboost as xgb", "lgb": "import lightgbm as lgb",
	"DataLoader": "from torch.utils.data import DataLoader", "TensorDataset": "from torch.utils.data import TensorDataset",
	"Dataset":                    "from torch.utils.data import Dataset",
	"train_test_split":           "from sklearn.model_selection import train_test_split",
	"cross_val_score":            "from sklearn.model_selection import cross_val_score",
	"GridSearchCV":               "from sklearn.model_selection import GridSearchCV",
	"KFold":                      "from sklearn.model_selection import KFold",
	"StandardScaler":             "from sklearn.preprocessing import StandardScaler",
	"MinMaxScaler":               "from sklearn.preprocessing import MinMaxScaler",
	"LabelEncoder":               "from sklearn.preprocessing import LabelEncoder",
	"OneHotEncoder":              "from sklearn.preprocessing import OneHotEncoder",
	"SimpleImputer":              "from sklearn.impute import SimpleImputer",
	"Pipeline":                   "from sklearn.pipeline import Pipeline",
	"make_pipeline":              "from sklearn.pipeline import make_pipeline",
	"ColumnTransformer":          "from sklearn.compose import ColumnTransformer",
	"LinearRegression":           "from sklearn.linear_model import LinearRegression",
	"LogisticRegression":         "from sklearn.linear_model import LogisticRegression",
	"Ridge":                      "from sklearn.linear_model import Ridge",
	"Lasso":                      "from sklearn.linear_model import Lasso",
	"RandomForestClassifier":     "from sklearn.ensemble import RandomForestClassifier",
	"RandomForestRegressor":      "from sklearn.ensemble import RandomForestRegressor",
	"GradientBoostingClassifier": "from sklearn.ensemble import GradientBoostingClassifier",
	"DecisionTreeClassifier":     "from sklearn.tree import DecisionTreeClassifier",
	"KNeighborsClassifier":       "from sklearn.neighbors import KNeighborsClassifier",
	"SVC":                        "from sklearn.svm import SVC",
	"KMeans":                     "from sklearn.cluster import KMeans",
	"PCA":                        "from sklearn.decomposition import PCA",
	"accuracy_score":             "from sklearn.metrics import accuracy_score",
	"mean_squared_error":         "from sklearn.metrics import mean_squared_error",
	"r2_score":                   "from sklearn.metrics import r2_score",
	"f1_score":                   "from sklearn.metrics import f1_score",
	"confusion_matrix":           "from sklearn.metrics import confusion_matrix",
	"classification_report":      "from sklearn.metrics import classification_report",
	"roc_auc_score":              "from sklearn.metrics import roc_auc_score",
	// More of what ML notebooks use without importing it in the cell that crashed: the
	// fix is verified, so a library the kernel cannot import is never offered.
	"mean_absolute_error":       "from sklearn.metrics import mean_absolute_error",
	"precision_score":           "from sklearn.metrics import precision_score",
	"recall_score":              "from sklearn.metrics import recall_score",
	"roc_curve":                 "from sklearn.metrics import roc_curve",
	"ConfusionMatrixDisplay":    "from sklearn.metrics import ConfusionMatrixDisplay",
	"StratifiedKFold":           "from sklearn.model_selection import StratifiedKFold",
	"RandomizedSearchCV":        "from sklearn.model_selection import RandomizedSearchCV",
	"cross_val_predict":         "from sklearn.model_selection import cross_val_predict",
	"PolynomialFeatures":        "from sklearn.preprocessing import PolynomialFeatures",
	"OrdinalEncoder":            "from sklearn.preprocessing import OrdinalEncoder",
	"RobustScaler":              "from sklearn.preprocessing import RobustScaler",
	"ElasticNet":                "from sklearn.linear_model import ElasticNet",
	"SGDClassifier":             "from sklearn.linear_model import SGDClassifier",
	"DecisionTreeRegressor":     "from sklearn.tree import DecisionTreeRegressor",
	"GradientBoostingRegressor": "from sklearn.ensemble import GradientBoostingRegressor",
	"ExtraTreesClassifier":      "from sklearn.ensemble import ExtraTreesClassifier",
	"AdaBoostClassifier":        "from sklearn.ensemble import AdaBoostClassifier",
	"KNeighborsRegressor":       "from sklearn.neighbors import KNeighborsRegressor",
	"SVR":                       "from sklearn.svm import SVR",
	"LinearSVC":                 "from sklearn.svm import LinearSVC",
	"GaussianNB":                "from sklearn.naive_bayes import GaussianNB",
	"TfidfVectorizer":           "from sklearn.feature_extraction.text import TfidfVectorizer",
	"CountVectorizer":           "from sklearn.feature_extraction.text import CountVectorizer",
	"TSNE":                      "from sklearn.manifold import TSNE",
	"seasonal_decompose":        "from statsmodels.tsa.seasonal import seasonal_decompose",
	"display":                   "from IPython.display import display",
	"Image":                     "from PIL import Image",
	"shutil":                    "import shutil", "copy": "import copy", "gc": "import gc", "string": "import string",
	"torchvision": "import torchvision", "transforms": "from torchvision import transforms",
	"keras": "from tensorflow import keras", "cv2": "import cv2", "msno": "import missingno as msno",
}

func importGen(in *Input) []Candidate {
	if in.exception() != "NameError" {
		return nil
	}
	m := nameErrorRE.FindStringSubmatch(in.message())
	if m == nil {
		return nil
	}
	first, ok := conventionalImports[m[1]]
	if !ok {
		return nil
	}
	stmts := []string{first}
	names := []string{m[1]}
	if in.Facts != nil && in.Inspection != nil && in.Inspection.Namespace != nil {
		defined := map[string]bool{m[1]: true}
		for _, n := range in.Inspection.Namespace {
			defined[n] = true
		}
		for _, d := range in.Facts.Defs {
			defined[d.Name] = true
		}
		var more []string
		for _, u := range in.Facts.Uses {
			if s, ok := conventionalImports[u.Name]; ok && !defined[u.Name] {
				defined[u.Name] = true
				more = append(more, u.Name)
				stmts = append(stmts, s)
			}
		}
		sort.Strings(more)
		names = append(names, more...)
	}
	at := 0
	if strings.HasPrefix(strings.TrimSpace(lineAt(in.Text, 0)), "%%") {
		at = 1 // a cell magic must stay the first line
	}
	p := finding.Position{Line: at}
	title := fmt.Sprintf("Add `%s`", strings.Join(stmts, "; "))
	return []Candidate{{
		Fix:   finding.Fix{Title: title, Edits: []finding.Edit{{Range: finding.Range{Start: p, End: p}, NewText: strings.Join(stmts, "\n") + "\n"}}},
		Keeps: fmt.Sprintf("%s is the conventional name of that import; the cell's code is unchanged", strings.Join(names, ", ")),
	}}
}
