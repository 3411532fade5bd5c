"""Writes the small CSV files the corpus notebooks read (deterministic: fixed seeds, fixed
formatting). Run with /usr/bin/python3 from this folder; the output is committed."""
import csv
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def write(name, header, rows):
    with open(os.path.join(DATA, name), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def houses():
    r = random.Random(1)
    hoods = ["NAmes", "CollgCr", "OldTown", "Edwards", "Somerst"]
    styles = ["1Story", "2Story", "1.5Fin"]
    rows = []
    for i in range(160):
        # 'Blueste' only early (absent from the time-based test split), 'SLvl' only late
        # (unseen by anything fitted on the train split).
        hood = "Blueste" if i < 100 and i % 17 == 3 else r.choice(hoods)
        style = "SLvl" if i >= 150 and i % 3 == 0 else r.choice(styles)
        lot = r.randint(3000, 20000)
        year = r.randint(1920, 2008)
        qual = r.randint(1, 10)
        garage = "" if i % 13 == 5 else str(r.randint(0, 3))
        price = int(20000 + 9 * lot + 900 * (year - 1900) + 15000 * qual + r.randint(-20000, 20000))
        rows.append([i + 1, lot, year, qual, garage, hood, style, price])
    write("houses.csv", ["Id", "LotArea", "YearBuilt", "OverallQual", "GarageCars",
                         "Neighborhood", "HouseStyle", "SalePrice"], rows)


def churn():
    r = random.Random(2)
    contracts = ["Month-to-month", "One year", "Two year"]
    pays = ["Electronic check", "Mailed check", "Bank transfer", "Credit card"]
    rows = []
    for i in range(200):
        tenure = r.randint(0, 72)
        monthly = round(r.uniform(18, 120), 2)
        total = "" if tenure == 0 else "${:,.2f}".format(monthly * tenure)
        calls = "" if i % 11 == 4 else str(r.randint(0, 9))
        contract = r.choice(contracts)
        churn = "Yes" if (contract == "Month-to-month" and r.random() < 0.5) or r.random() < 0.1 else "No"
        rows.append(["C%04d" % (i + 1), r.randint(18, 80), tenure, "${:,.2f}".format(monthly),
                     total, calls, contract, r.choice(pays), churn])
    write("churn.csv", ["customerID", "Age", "Tenure", "MonthlyCharges", "TotalCharges",
                        "SupportCalls", "Contract", "PaymentMethod", "Churn"], rows)


def orders():
    r = random.Random(3)
    regions = ["North", "South", "East", "West"]
    segments = ["Consumer", "Corporate", "Home Office"]
    write("customers.csv", ["customer_id", "region", "segment"],
          [[c, r.choice(regions), r.choice(segments)] for c in range(1, 41)])
    cats = ["Furniture", "Office Supplies", "Technology"]
    rows = []
    for i in range(300):
        rows.append([10000 + i, r.randint(1, 40), "2024-%02d-%02d" % (r.randint(1, 12), r.randint(1, 28)),
                     round(r.uniform(5, 900), 2), r.choice(cats)])
    write("orders.csv", ["order_id", "cust_id", "order_date", "amount", "category"], rows)


def sensors():
    r = random.Random(4)
    rows = []
    for i in range(240):
        label = i % 3
        rows.append([round(r.gauss(label * 0.8 + k * 0.1, 1.0), 4) for k in range(8)] + [label])
    write("sensors.csv", ["s%d" % k for k in range(1, 9)] + ["label"], rows)


def reviews():
    r = random.Random(5)
    words = ["great", "bad", "okay", "love", "broken", "fast", "slow", "cheap", "solid", "meh"]
    rows = []
    for i in range(150):
        text = " ".join(r.choice(words) for _ in range(r.randint(3, 9)))
        rows.append([i + 1, "  " + text + " ", r.randint(1, 5), r.randint(0, 40)])
    write("reviews.csv", ["review_id", "text", "rating", "helpful_votes"], rows)


if __name__ == "__main__":
    os.makedirs(DATA, exist_ok=True)
    houses()
    churn()
    orders()
    sensors()
    reviews()
